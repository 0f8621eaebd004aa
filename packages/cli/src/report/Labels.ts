/**
 * How a contact's job department and job level are shown in the report. The provider sends codes
 * (it_is, vp); until lookup tables of their labels exist in the schema the report shows the codes
 * themselves. This is the one place that turns codes into labels: to show labels, join the lookup
 * tables here (for example `LEFT JOIN <schema>.job_departments d ON d.code = c.job_department` and
 * `coalesce(d.label, c.job_department)`), and every chart and table follows.
 */

export interface ContactLabels {
  /** Joins added after `FROM <schema>.contacts c` (none while only codes are known). */
  readonly joins: string
  /** SQL of the department's label, over the contact row `c`. */
  readonly department: string
  /** SQL of the level's label, over the contact row `c`. */
  readonly level: string
}

/** The label expressions of a contact's department and level in `_schema` (the codes, for now). */
export const contactLabels = (_schema: string): ContactLabels => ({
  joins: "",
  department: "c.job_department",
  level: "c.job_level",
})

/** What the report shows for a missing code or label. */
export const missing = "(none)"
