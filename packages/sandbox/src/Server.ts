// The HTTP server: routing, authentication, permissions, faults, credits and the JSON
// envelopes. The order of the checks is part of the contract:
//   401 (key, Accept) -> per-key limit 429 -> injected faults -> 403 -> 400 -> 402 -> 200.
// Injected faults and every refusal happen before any charge, so they never cost credits.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Account, type AccountSpec, mergeAccounts } from "./Accounts.ts"
import { Dataset, type DatasetOptions } from "./Dataset.ts"
import { type FaultDecision, type FaultSettings, Faults, parseFaultSettings } from "./Faults.ts"
import {
  BadRequest,
  parseAppendQuery,
  parseCategoriesQuery,
  parsePeopleQuery,
  parseProductsQuery,
  usesTechFilter,
} from "./Filters.ts"
import { companyTechnologies, maskContact } from "./Records.ts"
import { Search, selectProducts } from "./Search.ts"

export interface SandboxOptions extends DatasetOptions {
  /** TCP port; 0 (the default) picks a free one. */
  readonly port?: number
  /** Interface to bind; 127.0.0.1 by default (the sandbox is for local use). */
  readonly host?: string
  /** Accounts added to (or overriding) the built-in sandbox-* keys. */
  readonly accounts?: readonly AccountSpec[]
  /** Global fault settings at start (and after POST /_sandbox/reset). */
  readonly faults?: FaultSettings
  /**
   * Return an organization once per country on append when is_international is omitted,
   * as the provider warns it may. Off by default; connector tests should turn it on.
   */
  readonly duplicates?: boolean
}

export interface Sandbox {
  readonly url: string
  readonly port: number
  /** The dataset currently served (POST /_sandbox/dataset may replace it). */
  readonly dataset: Dataset
  /** Per-key counters, as GET /_sandbox/accounts answers them. */
  accounts(): Record<string, ReturnType<Account["snapshot"]>>
  /** Restores balances, counters and faults, as POST /_sandbox/reset does. */
  reset(): void
  /**
   * Adds an account (or replaces one of the same key) while the sandbox runs: a test that takes a
   * key of its own reads its own counters, whatever other tests of the file asked meanwhile.
   */
  addAccount(spec: AccountSpec): void
  /** Sets faults for one key or (without a key) globally, as POST /_sandbox/faults does. */
  setFaults(settings: FaultSettings, key?: string): void
  close(): Promise<void>
}

export type EndpointName =
  | "people.search"
  | "people.preview"
  | "technologies.append"
  | "taxonomy.categories"
  | "taxonomy.products"

export const endpoints: Readonly<Record<string, EndpointName>> = {
  "/service/people": "people.search",
  "/service/people/preview": "people.preview",
  "/service/technologies/append": "technologies.append",
  "/service/technologies/taxonomy/categories": "taxonomy.categories",
  "/service/technologies/taxonomy/products": "taxonomy.products",
}

interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** Credits to charge if the reply goes out as a 200 (search and append only). */
  readonly credits?: number
}

const error = (status: number, message: string, headers?: Record<string, string>): Reply => ({
  status,
  body: { error: message },
  headers,
})

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const envelope = (
  isPreview: boolean,
  page: number,
  pageSize: number,
  total: number,
  results: readonly unknown[],
) => ({
  aggregations: {},
  batch_id: null,
  error: null,
  is_preview: isPreview,
  page,
  page_size: pageSize,
  result_count: total,
  search_results: results,
})

export class SandboxServer {
  dataset: Dataset
  private search: Search
  readonly accounts: Map<string, Account>
  readonly faults: Faults

  constructor(readonly options: SandboxOptions = {}) {
    this.dataset = Dataset.build(options)
    this.search = new Search(this.dataset, options.duplicates ?? false)
    this.accounts = new Map(mergeAccounts(options.accounts).map((spec) => [spec.key, new Account(spec)]))
    this.faults = new Faults(this.dataset.seed, options.faults)
  }

  reset(): void {
    for (const account of this.accounts.values()) account.reset()
    this.faults.reset()
  }

  addAccount(spec: AccountSpec): void {
    this.accounts.set(spec.key, new Account(spec))
  }

  accountsSnapshot(): Record<string, ReturnType<Account["snapshot"]>> {
    return Object.fromEntries([...this.accounts].map(([key, a]) => [key, a.snapshot()]))
  }

  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.route(req, res).catch((e: unknown) => {
      if (!res.headersSent)
        this.send(res, error(500, `sandbox failure: ${e instanceof Error ? e.message : String(e)}`))
      else res.destroy()
    })
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://sandbox.local")
    if (url.pathname.startsWith("/_sandbox/")) return this.admin(req, res, url)
    const endpoint = endpoints[url.pathname.replace(/\/+$/, "")]
    if (endpoint === undefined) return this.send(res, error(404, `no such endpoint: ${url.pathname}`))
    if (req.method !== "GET") {
      return this.send(
        res,
        error(405, `${req.method} is not allowed; every endpoint is GET`, { Allow: "GET" }),
      )
    }

    const keyHeader = req.headers["x-cb-apikey"]
    const key = typeof keyHeader === "string" ? keyHeader : undefined
    const account = key === undefined ? undefined : this.accounts.get(key)
    if (key === undefined || account === undefined) {
      return this.send(res, error(401, key === undefined ? "missing X-CB-ApiKey header" : "unknown API key"))
    }
    const reply = (r: Reply) => {
      account.count(endpoint, r.status)
      this.send(res, r)
    }
    if (!(req.headers.accept ?? "").toLowerCase().includes("application/json")) {
      return reply(error(401, "the Accept: application/json header is required"))
    }

    const retryAfter = this.faults.overLimit(account.spec.key, Date.now())
    const retryAfterHeader = (seconds: number): Record<string, string> =>
      this.faults.settingsFor(account.spec.key).retry_after_header === 0
        ? {}
        : { "Retry-After": String(seconds) }
    const delay = this.faults.delay(account.spec.key)
    if (delay > 0) await sleep(delay)
    if (retryAfter !== undefined) {
      return reply(
        error(
          429,
          "rate limit exceeded: too many requests per minute for this key",
          retryAfterHeader(retryAfter),
        ),
      )
    }
    const fault: FaultDecision = this.faults.decide(account.spec.key)
    switch (fault.kind) {
      case "drop":
        account.count(endpoint, "dropped")
        req.socket.destroy()
        return
      case "error":
        return reply(error(500, "internal server error (injected by the sandbox)"))
      case "rate_limited":
        return reply(
          error(429, "rate limit exceeded (injected by the sandbox)", retryAfterHeader(fault.retryAfterS)),
        )
    }

    let result: Reply
    try {
      result = this.answer(endpoint, account, url.searchParams)
    } catch (e) {
      if (e instanceof BadRequest) result = error(400, e.message)
      else throw e
    }
    if (result.status === 200 && result.credits !== undefined) {
      if (fault.kind === "truncate") {
        // A cut body is no delivery: nothing is charged, as for every injected fault.
      } else if (!account.charge(result.credits)) {
        return reply(
          error(
            402,
            `not enough credits: this page needs ${result.credits}, the account has ${account.creditsLeft} left`,
          ),
        )
      }
    }
    if (fault.kind === "truncate" && result.status === 200) {
      account.count(endpoint, "truncated")
      const body = Buffer.from(JSON.stringify(result.body))
      res.writeHead(200, { "Content-Type": "application/json", "Content-Length": String(body.length) })
      res.write(body.subarray(0, Math.floor(body.length / 2)), () => res.destroy())
      return
    }
    return reply(result)
  }

  /** The answer to an authenticated request (403, 400 or 200 with its price). */
  private answer(endpoint: EndpointName, account: Account, params: URLSearchParams): Reply {
    const needs = endpoint.startsWith("people.")
      ? "people"
      : endpoint === "technologies.append"
        ? "technologies"
        : "taxonomy"
    const allowed =
      needs === "taxonomy" ? account.can("technologies") || account.can("tech_addon") : account.can(needs)
    if (!allowed) {
      return error(
        403,
        `this account has no permission for ${endpoint} (needs '${needs === "taxonomy" ? "technologies" : needs}')`,
      )
    }
    if (usesTechFilter(params) && !account.can("tech_addon")) {
      return error(
        403,
        "tech_category, tech_subcategory, tech_product and tech_vendor need the technographics add-on",
      )
    }
    const d = this.dataset
    switch (endpoint) {
      case "people.search":
      case "people.preview": {
        const q = parsePeopleQuery(params)
        const page = this.search.people(q)
        const preview = endpoint === "people.preview"
        const records = this.withRecordFaults(account, page.items, (i) => {
          const sent = preview ? maskContact(d.contact(i)) : d.contact(i)
          // A number where the provider documents a string: what the paid record carries only.
          const contact =
            !preview && this.faults.hasBadField(account.spec.key, i)
              ? { ...sent, job_level: sent.job_level.length }
              : sent
          if (!this.faults.lacksMatchId(account.spec.key, i)) return contact
          const { match_id: _dropped, ...rest } = contact
          return rest
        })
        return {
          status: 200,
          body: envelope(preview, q.paging.page, q.paging.pageSize, page.total, records),
          credits: preview ? undefined : records.length,
        }
      }
      case "technologies.append": {
        const q = parseAppendQuery(params)
        const page = this.search.append(q)
        const selection = q.tech === undefined ? undefined : selectProducts(d.taxonomy.products, q.tech)
        const records = this.withRecordFaults(
          account,
          page.items.map((row) => row.company.index),
          (_, at) => {
            const row = page.items[at]!
            return companyTechnologies(
              row.company,
              d.companyProducts[row.company.index]!,
              d.taxonomy,
              selection,
              row.country,
            )
          },
        )
        return {
          status: 200,
          body: envelope(false, q.paging.page, q.paging.pageSize, page.total, records),
          credits: records.length,
        }
      }
      case "taxonomy.categories": {
        parseCategoriesQuery(params)
        const results = d.taxonomy.categories.map((c) => ({
          category: c.category,
          subcategories: c.subcategories,
        }))
        return { status: 200, body: { result_count: results.length, search_results: results } }
      }
      case "taxonomy.products": {
        const q = parseProductsQuery(params)
        const page = this.search.products(q)
        const results = page.items.map((p) => ({
          product: p.product,
          vendor: p.vendor,
          category: p.category,
          subcategory: p.subcategory,
        }))
        return { status: 200, body: envelope(false, q.paging.page, q.paging.pageSize, page.total, results) }
      }
    }
  }

  /**
   * A page's records, each made by `make` from its record index and place on the page, with the
   * per-record faults of the key: a record chosen by `duplicate_rate` is sent twice in a row.
   */
  private withRecordFaults<T>(
    account: Account,
    indexes: ReadonlyArray<number>,
    make: (index: number, at: number) => T,
  ): Array<T> {
    return indexes.flatMap((index, at) => {
      const record = make(index, at)
      return this.faults.isDuplicated(account.spec.key, index) ? [record, record] : [record]
    })
  }

  /** Test and benchmark controls; they need no key. */
  private async admin(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const route = `${req.method} ${url.pathname}`
    const body = async (): Promise<unknown> => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const text = Buffer.concat(chunks).toString("utf8").trim()
      return text === "" ? {} : (JSON.parse(text) as unknown)
    }
    try {
      switch (route) {
        case "GET /_sandbox/accounts":
          return this.send(res, { status: 200, body: { accounts: this.accountsSnapshot() } })
        case "POST /_sandbox/reset":
          this.reset()
          return this.send(res, { status: 200, body: { accounts: this.accountsSnapshot() } })
        case "POST /_sandbox/faults": {
          const json = await body()
          const settings = parseFaultSettings(json)
          const key = (json as { key?: unknown }).key
          if (key !== undefined && typeof key !== "string") throw new Error("'key' must be a string")
          this.faults.set(settings, key)
          return this.send(res, {
            status: 200,
            body: { key: key ?? null, faults: this.faults.settingsFor(key ?? "") },
          })
        }
        case "GET /_sandbox/dataset":
          return this.send(res, { status: 200, body: this.datasetInfo() })
        case "POST /_sandbox/dataset": {
          const json = (await body()) as { contacts?: unknown; generation?: unknown }
          for (const name of ["contacts", "generation"] as const) {
            const v = json[name]
            if (v !== undefined && (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)) {
              throw new Error(`'${name}' must be a non-negative integer`)
            }
          }
          this.dataset = this.dataset.resized({
            contacts: json.contacts as number | undefined,
            generation: json.generation as number | undefined,
          })
          this.search = new Search(this.dataset, this.options.duplicates ?? false)
          return this.send(res, { status: 200, body: this.datasetInfo() })
        }
        default:
          return this.send(res, error(404, `no such sandbox control: ${route}`))
      }
    } catch (e) {
      return this.send(res, error(400, e instanceof Error ? e.message : String(e)))
    }
  }

  private datasetInfo() {
    const d = this.dataset
    return {
      seed: d.seed,
      contacts: d.contactCount,
      companies: d.companyCount,
      generation: d.generation,
      products: d.taxonomy.products.length,
      rss_mb: Math.round(process.memoryUsage().rss / 1e6),
    }
  }

  private send(res: ServerResponse, reply: Reply): void {
    const body = JSON.stringify(reply.body)
    res.writeHead(reply.status, {
      "Content-Type": "application/json",
      "Content-Length": String(Buffer.byteLength(body)),
      ...reply.headers,
    })
    res.end(body)
  }
}

/** Starts a sandbox on 127.0.0.1 (by default on a free port) and resolves once it listens. */
export const startSandbox = async (options: SandboxOptions = {}): Promise<Sandbox> => {
  const sandbox = new SandboxServer(options)
  const server = createServer(sandbox.handle)
  const host = options.host ?? "127.0.0.1"
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, host, () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    get dataset() {
      return sandbox.dataset
    },
    accounts: () => sandbox.accountsSnapshot(),
    reset: () => sandbox.reset(),
    addAccount: (spec) => sandbox.addAccount(spec),
    setFaults: (settings, key) => sandbox.faults.set(settings, key),
    close: () =>
      new Promise<void>((resolve, reject) => {
        // Keep-alive sockets would otherwise hold close() open (toolchain-notes.md).
        server.closeAllConnections()
        server.close((e) => (e ? reject(e) : resolve()))
      }),
  }
}
