/**
 * How a contact's job department and job level are shown in the report: the labels of the
 * lookup tables a sync creates (`job_departments`, `job_levels`, filled from the interface
 * specification by the loader's DDL), and the code itself for a code they do not know. This is the
 * one place that turns codes into labels; every chart and table follows it.
 */
import { Schema, Sql } from "@salesintel/postgres"

export interface ContactLabels {
  /** Joins added after `FROM <schema>.contacts c`. */
  readonly joins: string
  /** SQL of the department's label, over the contact row `c`. */
  readonly department: string
  /** SQL of the level's label, over the contact row `c`. */
  readonly level: string
}

/** The lookup tables the labels come from (the report requires them: a sync creates them). */
export const lookupTables: ReadonlyArray<string> = [
  Schema.Labels.jobDepartments.table.name,
  Schema.Labels.jobLevels.table.name,
]

/** The label expressions of a contact's department and level in `schema`. */
export const contactLabels = (schema: string): ContactLabels => ({
  joins: `LEFT JOIN ${Sql.qualified(schema, Schema.Labels.jobDepartments.table.name)} d ON d.code = c.job_department
LEFT JOIN ${Sql.qualified(schema, Schema.Labels.jobLevels.table.name)} l ON l.code = c.job_level`,
  department: "coalesce(d.label, c.job_department)",
  level: "coalesce(l.label, c.job_level)",
})

/** What the report shows for a missing code or label. */
export const missing = "(none)"
