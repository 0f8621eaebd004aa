// What a modification generation changes beyond last_modified_date: technologies adopted and
// dropped at some companies, and contacts moved to another company, title or level. Every
// change is drawn from (seed, index, generation), so tests can list the truth between any two
// generations and compare a connector's change tables with it.
import type { Company } from "./Companies.ts"
import { titles } from "./Contacts.ts"
import type { Dataset } from "./Dataset.ts"
import { below, unit } from "./Random.ts"
import type { Taxonomy } from "./Taxonomy.ts"
import { jobDepartments, jobLevels } from "./Vocabulary.ts"

/** Salts of generation `g`'s technology draws (part 0..3), apart from every other field's. */
const techSalt = (g: number, part: number): number => 2_000_000 + g * 4 + part

/** Whether generation `g` changes the company's technologies (~10% of companies per generation). */
export const changesTechnologies = (seed: number, company: number, g: number): boolean =>
  unit(seed, company, techSalt(g, 0)) < 0.1

/** Salts of generation `g`'s displacement draws (part 0..1), apart from the technology draws above. */
const displaceSalt = (g: number, part: number): number => 3_000_000 + g * 2 + part

/** Of the companies a generation changes, the share that replace a product with another of its subcategory. */
const displacementShare = 0.3

/**
 * A displacement: one product in use dropped and one of the same subcategory that the company
 * does not use adopted in its place; false when no product in use has such a rival.
 */
const displace = (
  seed: number,
  company: number,
  g: number,
  inUse: Set<number>,
  subcategories: ReadonlyArray<string>,
): boolean => {
  const candidates = [...inUse]
    .sort((a, b) => a - b)
    .filter((id) => subcategories.some((other, rival) => other === subcategories[id] && !inUse.has(rival)))
  if (candidates.length === 0) return false
  const dropped = candidates[below(seed, company, displaceSalt(g, 1), candidates.length)]!
  const rivals = subcategories.flatMap((other, rival) =>
    other === subcategories[dropped] && !inUse.has(rival) ? [rival] : [],
  )
  inUse.delete(dropped)
  inUse.add(rivals[0]!)
  return true
}

/**
 * A company's products (taxonomy product ids, ascending) at a generation: the ones it was
 * generated with, then for each generation that changes it, a displacement (a share: one product
 * replaced by another of its subcategory), else one product adopted (a third), one dropped (a
 * third; never its last), or one of each. `subcategories` is each product id's category and
 * subcategory as one key (`subcategoryKeys`).
 */
export const productsAt = (
  seed: number,
  company: Company,
  subcategories: ReadonlyArray<string>,
  generation: number,
): ReadonlyArray<number> => {
  if (generation === 0) return company.products
  const productCount = subcategories.length
  const inUse = new Set(company.products)
  for (let g = 1; g <= generation; g++) {
    if (!changesTechnologies(seed, company.index, g)) continue
    if (unit(seed, company.index, displaceSalt(g, 0)) < displacementShare) {
      if (displace(seed, company.index, g, inUse, subcategories)) continue
    }
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

/** Each product id's category and subcategory as one key: products with the same key are rivals. */
export const subcategoryKeys = (taxonomy: Taxonomy): ReadonlyArray<string> =>
  taxonomy.products.map((product) => `${product.category}\u0000${product.subcategory}`)

/** Products adopted and dropped between two generations, per company (net: adopted then dropped is no change). */
export const technologyChanges = (
  dataset: Dataset,
  from: number,
  to: number,
): ReadonlyArray<TechnologyChange> => {
  const { products } = dataset.taxonomy
  const subcategories = subcategoryKeys(dataset.taxonomy)
  return dataset.companies.flatMap((company) => {
    const before = new Set(productsAt(dataset.seed, company, subcategories, from))
    const after = new Set(productsAt(dataset.seed, company, subcategories, to))
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

export interface Displacement {
  readonly company_id: number
  readonly category: string
  readonly subcategory: string
  readonly dropped_product: string
  readonly dropped_vendor: string
  readonly adopted_product: string
  readonly adopted_vendor: string
  /** The steps (indexes into the generations observed, from 1) whose observation shows each change. */
  readonly dropped_step: number
  readonly adopted_step: number
}

/**
 * What a watcher observing every company at each of `generations` in turn (ascending) finds as
 * displacements: a product dropped and another of the same category and subcategory adopted at
 * the same company, at any two steps (generations have no dates here: every step is taken to be
 * within the connector's window). The changes of each step are those between it and the one before.
 */
export const displacements = (
  dataset: Dataset,
  generations: ReadonlyArray<number>,
): ReadonlyArray<Displacement> => {
  const steps = generations.slice(1).map((to, index) => ({
    step: index + 1,
    changes: technologyChanges(dataset, generations[index]!, to),
  }))
  const all = steps.flatMap(({ step, changes }) => changes.map((change) => ({ step, ...change })))
  return all
    .filter((drop) => drop.change === "dropped")
    .flatMap((drop) =>
      all
        .filter(
          (adoption) =>
            adoption.change === "adopted" &&
            adoption.company_id === drop.company_id &&
            adoption.category === drop.category &&
            adoption.subcategory === drop.subcategory &&
            (adoption.product !== drop.product || adoption.vendor !== drop.vendor),
        )
        .map((adoption) => ({
          company_id: drop.company_id,
          category: drop.category,
          subcategory: drop.subcategory,
          dropped_product: drop.product,
          dropped_vendor: drop.vendor,
          adopted_product: adoption.product,
          adopted_vendor: adoption.vendor,
          dropped_step: drop.step,
          adopted_step: adoption.step,
        })),
    )
}
