// What a modification generation changes beyond last_modified_date: technologies adopted and
// dropped at some companies, and contacts moved to another company, title or level. Every
// change is drawn from (seed, index, generation), so tests can list the truth between any two
// generations and compare a connector's change tables with it.
import type { Company } from "./Companies.ts"
import { titles } from "./Contacts.ts"
import type { Dataset } from "./Dataset.ts"
import { below, unit } from "./Random.ts"
import { jobDepartments, jobLevels } from "./Vocabulary.ts"

/** Salts of generation `g`'s technology draws (part 0..3), apart from every other field's. */
const techSalt = (g: number, part: number): number => 2_000_000 + g * 4 + part

/** Whether generation `g` changes the company's technologies (~10% of companies per generation). */
export const changesTechnologies = (seed: number, company: number, g: number): boolean =>
  unit(seed, company, techSalt(g, 0)) < 0.1

/**
 * A company's products (taxonomy product ids, ascending) at a generation: the ones it was
 * generated with, then for each generation that changes it, one product adopted (a third), one
 * dropped (a third; never its last), or one of each.
 */
export const productsAt = (
  seed: number,
  company: Company,
  productCount: number,
  generation: number,
): ReadonlyArray<number> => {
  if (generation === 0) return company.products
  const inUse = new Set(company.products)
  for (let g = 1; g <= generation; g++) {
    if (!changesTechnologies(seed, company.index, g)) continue
    const kind = below(seed, company.index, techSalt(g, 1), 3)
    if (kind !== 1 && inUse.size < productCount) {
      // A product it does not use: a draw, then the next free id (wrapping).
      let product = below(seed, company.index, techSalt(g, 2), productCount)
      while (inUse.has(product)) product = (product + 1) % productCount
      inUse.add(product)
    } else if (kind !== 0 && inUse.size > 1) {
      const current = [...inUse].sort((a, b) => a - b)
      inUse.delete(current[below(seed, company.index, techSalt(g, 3), current.length)]!)
    }
  }
  return [...inUse].sort((a, b) => a - b)
}

export interface TechnologyChange {
  readonly company_id: number
  readonly product: string
  readonly vendor: string
  readonly category: string
  readonly subcategory: string
  readonly change: "adopted" | "dropped"
}

/** A contact's job as its record says it: what a job change compares. */
export interface Job {
  readonly company_id: number
  readonly job_title: string | null
  readonly job_level: string
  readonly job_department: string
}

export interface JobChange {
  readonly match_id: string
  readonly from: Job
  readonly to: Job
}

/** Products adopted and dropped between two generations, per company (net: adopted then dropped is no change). */
export const technologyChanges = (
  dataset: Dataset,
  from: number,
  to: number,
): ReadonlyArray<TechnologyChange> => {
  const { products } = dataset.taxonomy
  return dataset.companies.flatMap((company) => {
    const before = new Set(productsAt(dataset.seed, company, products.length, from))
    const after = new Set(productsAt(dataset.seed, company, products.length, to))
    const change = (id: number, kind: TechnologyChange["change"]): TechnologyChange => {
      const p = products[id]!
      const { category, subcategory, product, vendor } = p
      return { company_id: company.id, product, vendor, category, subcategory, change: kind }
    }
    return [
      ...[...after].filter((id) => !before.has(id)).map((id) => change(id, "adopted")),
      ...[...before].filter((id) => !after.has(id)).map((id) => change(id, "dropped")),
    ]
  })
}

/** The job of contact `index` at a generation. */
export const jobAt = (dataset: Dataset, index: number, generation: number): Job => {
  const traits = dataset.factory.traits(index, generation)
  return {
    company_id: dataset.companies[traits.company]!.id,
    job_title: traits.title === 0 ? null : titles[traits.title]!,
    job_level: jobLevels[traits.level]!.code,
    job_department: jobDepartments[traits.department]!.code,
  }
}

const sameJob = (a: Job, b: Job): boolean =>
  a.company_id === b.company_id &&
  a.job_title === b.job_title &&
  a.job_level === b.job_level &&
  a.job_department === b.job_department

/** Contacts whose job differs between two generations (net: a move and a move back is no change). */
export const jobChanges = (dataset: Dataset, from: number, to: number): ReadonlyArray<JobChange> => {
  const [low, high] = from <= to ? [from, to] : [to, from]
  const changes: Array<JobChange> = []
  for (let index = 0; index < dataset.contactCount; index++) {
    let moved = false
    for (let g = low + 1; g <= high && !moved; g++) moved = dataset.factory.moves(index, g)
    if (!moved) continue
    const before = jobAt(dataset, index, from)
    const after = jobAt(dataset, index, to)
    if (!sameJob(before, after)) changes.push({ match_id: dataset.matchId(index), from: before, to: after })
  }
  return changes
}
