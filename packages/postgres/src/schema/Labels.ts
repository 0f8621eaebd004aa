/**
 * Lookup tables for the provider's codes, with their meanings from the interface specification
 * (section 2): job levels, job departments and required-field codes. The codes come from the
 * core's code lists (Filters.ts), so a code added there without a label here does not build. The
 * DDL creates these tables and writes their rows on every run (Ddl.ts); the views join them.
 */
import type { Filters } from "@salesintel/core"
import type { TableShape } from "./Table.ts"

/** A lookup table and its rows, one value per column in the table's column order. */
export interface LookupTable {
  readonly table: TableShape
  readonly rows: ReadonlyArray<ReadonlyArray<string | number>>
}

const codeColumn = { name: "code", type: "text", notNull: true, doc: "the provider's code" } as const

/** Seniority: 1 is the most senior level, so `ORDER BY seniority` lists the board first. */
const jobLevelLabels: { readonly [Code in Filters.JobLevel]: readonly [label: string, seniority: number] } = {
  brd: ["Board member", 1],
  chf: ["C-level", 2],
  vp: ["Vice president", 3],
  dir: ["Director", 4],
  mgr: ["Manager", 5],
  stf: ["Other (non-management)", 6],
}

const jobDepartmentLabels: { readonly [Code in Filters.JobDepartment]: string } = {
  fnad: "Finance/Administrative",
  hr: "Human Resources",
  it_is: "IT",
  lgl: "Legal",
  mrkt: "Marketing",
  ops: "Operations",
  prc: "Procurement",
  enrd: "Engineering/R&D",
  sale: "Sales/CS/Support",
  other: "All other",
}

const requiredFieldLabels: { readonly [Code in Filters.RequiredField]: string } = {
  address: "any address",
  phone: "any phone number",
  direct_phone: "any direct line, work or mobile",
  any_mobile: "a mobile number",
  personal_email: "a personal email address",
  linkedin_url: "a profile URL on the professional network",
  job_title: "a job title",
}

export const jobLevels: LookupTable = {
  table: {
    name: "job_levels",
    doc: "the job level codes of contacts.job_level and what they mean",
    primaryKey: ["code"],
    columns: [
      { ...codeColumn, doc: "job level code (contacts.job_level)" },
      { name: "label", type: "text", notNull: true, doc: "what the code means" },
      {
        name: "seniority",
        type: "integer",
        notNull: true,
        doc: "1 for the most senior level (board), 6 for staff",
      },
    ],
  },
  rows: Object.entries(jobLevelLabels).map(([code, [label, seniority]]) => [code, label, seniority]),
}

export const jobDepartments: LookupTable = {
  table: {
    name: "job_departments",
    doc: "the job department codes of contacts.job_department and what they mean",
    primaryKey: ["code"],
    columns: [
      { ...codeColumn, doc: "job department code (contacts.job_department)" },
      { name: "label", type: "text", notNull: true, doc: "what the code means" },
    ],
  },
  rows: Object.entries(jobDepartmentLabels).map(([code, label]) => [code, label]),
}

export const requiredFieldCodes: LookupTable = {
  table: {
    name: "required_field_codes",
    doc: "the codes of the contact searches' required_fields filter and what a contact must have for each",
    primaryKey: ["code"],
    columns: [
      { ...codeColumn, doc: "required-field code (a search's required_fields)" },
      { name: "label", type: "text", notNull: true, doc: "what the contact must have" },
    ],
  },
  rows: Object.entries(requiredFieldLabels).map(([code, label]) => [code, label]),
}

export const all: ReadonlyArray<LookupTable> = [jobLevels, jobDepartments, requiredFieldCodes]
