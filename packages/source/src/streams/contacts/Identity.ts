/**
 * A known contact's identity, as the interface specification identifies a contact: by email, by
 * first name + last name + company domain, by profile URL, or by match id. One shape for every
 * way in (the config's `contacts.known` and `contacts.emails`, a file's rows, a query's rows), so
 * a row is checked by one function (`fromFields`) whatever brought it, and each identity has one
 * key in the state's set of identities looked up (`keyOf`; an email's key is the email itself, as
 * the set kept it before the other kinds were added).
 */
import type { Filters } from "@salesintel/core"
import * as Either from "effect/Either"

export type Identity =
  | { readonly kind: "email"; readonly email: string }
  | {
      readonly kind: "name"
      readonly first_name: string
      readonly last_name: string
      readonly company_domain: string
    }
  | { readonly kind: "linkedin"; readonly linkedin_url: string }
  | { readonly kind: "match_id"; readonly match_id: string }

/** The fields an entry, a file's column or a query's column may be named. */
export const fields = [
  "email",
  "first_name",
  "last_name",
  "company_domain",
  "linkedin_url",
  "match_id",
] as const
export type Field = (typeof fields)[number]

const kinds = "email, first_name + last_name + company_domain, linkedin_url, or match_id"
const emailPattern = /^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/
const linkedinPattern = /^(https?:\/\/)?([a-z0-9-]+\.)?linkedin\.com\/\S+/i
const nameFields = ["first_name", "last_name", "company_domain"] as const

const clean = (value: string | undefined): string | undefined => {
  const trimmed = value?.trim()
  return trimmed === undefined || trimmed.length === 0 ? undefined : trimmed
}

// A NUL or a comma would split or end the provider's comma-separated parameter.
const badText = (field: Field, value: string): string | undefined =>
  value.includes("\u0000")
    ? `${field} holds a NUL character`
    : value.includes(",") && field !== "first_name" && field !== "last_name"
      ? `${field} "${value}" holds a comma`
      : undefined

/**
 * The identity a row's fields give, or what was expected of them: exactly one identity, its
 * fields non-empty (blank cells count as absent).
 */
export const fromFields = (
  row: Readonly<Partial<Record<Field, string | undefined>>>,
): Either.Either<Identity, string> => {
  const value: Partial<Record<Field, string>> = {}
  for (const field of fields) {
    const text = clean(row[field])
    if (text !== undefined) value[field] = text
  }
  for (const field of fields) {
    const text = value[field]
    const problem = text === undefined ? undefined : badText(field, text)
    if (problem !== undefined) return Either.left(problem)
  }
  const named = nameFields.filter((field) => value[field] !== undefined)
  const given = [
    ...(value.email === undefined ? [] : ["email"]),
    ...(named.length === 0 ? [] : [named.length === 3 ? "first_name + last_name + company_domain" : "name"]),
    ...(value.linkedin_url === undefined ? [] : ["linkedin_url"]),
    ...(value.match_id === undefined ? [] : ["match_id"]),
  ]
  if (given.length === 0) return Either.left(`expected one identity: ${kinds}; this one has none`)
  if (given.length > 1)
    return Either.left(
      `expected exactly one identity (${kinds}); this one has ${given.map((g) => (g === "name" ? named.join(", ") : g)).join(" and ")}`,
    )
  if (value.email !== undefined)
    return emailPattern.test(value.email)
      ? Either.right({ kind: "email", email: value.email.toLowerCase() })
      : Either.left(`email "${value.email}" is not an email address such as jane@example.com`)
  if (value.linkedin_url !== undefined)
    return linkedinPattern.test(value.linkedin_url)
      ? Either.right({ kind: "linkedin", linkedin_url: value.linkedin_url })
      : Either.left(
          `linkedin_url "${value.linkedin_url}" is not a full profile URL such as https://www.linkedin.com/in/dana-reyes`,
        )
  if (value.match_id !== undefined) return Either.right({ kind: "match_id", match_id: value.match_id })
  const missing = nameFields.filter((field) => value[field] === undefined)
  if (missing.length > 0)
    return Either.left(
      `first_name, last_name and company_domain identify a contact together; ${missing.join(" and ")} ${missing.length === 1 ? "is" : "are"} missing`,
    )
  return Either.right({
    kind: "name",
    first_name: value.first_name ?? "",
    last_name: value.last_name ?? "",
    company_domain: (value.company_domain ?? "").toLowerCase(),
  })
}

/** The identity's key in the set of identities looked up (an email's is the email, as before). */
export const keyOf = (identity: Identity): string => {
  switch (identity.kind) {
    case "email":
      return identity.email
    case "name":
      return `name:${identity.first_name.toLowerCase()}|${identity.last_name.toLowerCase()}|${identity.company_domain}`
    case "linkedin":
      return `linkedin:${identity.linkedin_url.toLowerCase().replace(/\/+$/, "")}`
    case "match_id":
      return `match_id:${identity.match_id}`
  }
}

/** The identity as the user wrote it, for the line that names those matching no one. */
export const describe = (identity: Identity): string => {
  switch (identity.kind) {
    case "email":
      return identity.email
    case "name":
      return `${identity.first_name} ${identity.last_name} at ${identity.company_domain}`
    case "linkedin":
      return identity.linkedin_url
    case "match_id":
      return `match_id ${identity.match_id}`
  }
}

/** The free preview's filters for one identity (a match id is looked up in batches: `matchIdFilters`). */
export const filtersOf = (identity: Identity, matchOnJobHistory: boolean): Filters.PeopleFilters => {
  switch (identity.kind) {
    case "email":
      return { email: [identity.email], matchOnJobHistory }
    case "name":
      return {
        first_name: identity.first_name,
        last_name: identity.last_name,
        company_domain: [identity.company_domain],
      }
    case "linkedin":
      return { linkedin_url: identity.linkedin_url }
    case "match_id":
      return { match_ids: [identity.match_id] }
  }
}
