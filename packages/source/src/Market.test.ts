import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Config from "./Config.ts"
import * as Market from "./Market.ts"

const taxonomy: Market.TaxonomyNames = {
  products: ["Marketo Engage", "HubSpot Marketing Hub", "Salesforce Sales Cloud", "Pardot"],
  vendors: ["Adobe", "HubSpot", "Salesforce"],
}
const market = (fields: Partial<Market.MarketConfig>): Market.MarketConfig => ({
  ours: [],
  rivals: [],
  complements: [],
  ...fields,
})
const problemsOf = (input: unknown) =>
  Either.match(Config.decode(input), { onLeft: (error) => error.problems, onRight: () => [] })

describe("the config's market", () => {
  it("decodes the three lists, each empty when left out", () => {
    const config = Either.getOrThrow(
      Config.decode({ api_key: "k", credit_budget: 1, market: { rivals: ["HubSpot"] } }),
    )
    expect(config.market).toEqual({ ours: [], rivals: ["HubSpot"], complements: [] })
  })

  it("refuses a misspelt list, a name that is not a list and an empty name, each at its path", () => {
    expect(problemsOf({ api_key: "k", credit_budget: 1, market: { rival: ["HubSpot"] } })).toEqual([
      { path: "market.rival", message: 'is not a field here; did you mean "rivals"?' },
    ])
    expect(problemsOf({ api_key: "k", credit_budget: 1, market: { ours: "Marketo Engage" } })).toEqual([
      {
        path: "market.ours",
        message: `Expected a list of the team's own products: products or vendors as the taxonomy names them, such as ["Marketo Engage", "HubSpot"], actual "Marketo Engage"`,
      },
    ])
    expect(problemsOf({ api_key: "k", credit_budget: 1, market: { complements: ["Pardot", " "] } })).toEqual([
      {
        path: "market.complements[1]",
        message: "a product or vendor name as the taxonomy gives it, such as Marketo Engage",
      },
    ])
  })
})

describe("Market.entriesOf", () => {
  it("a vendor's name is the vendor, a product's the product, each with its role", () => {
    expect(
      Market.entriesOf(
        market({ ours: ["Marketo Engage"], rivals: ["HubSpot"], complements: ["Salesforce Sales Cloud"] }),
        taxonomy,
      ),
    ).toEqual(
      Either.right([
        { role: "ours", product: "Marketo Engage", vendor: null },
        { role: "rival", product: null, vendor: "HubSpot" },
        { role: "complement", product: "Salesforce Sales Cloud", vendor: null },
      ]),
    )
  })

  it("names the entry a taxonomy does not know and the nearest name: did you mean", () => {
    expect(
      Market.entriesOf(
        market({
          ours: ["Marketo Engage"],
          rivals: ["HubSpot", "Pardot", "Salesforse", "hubspot", "Nothing Like It"],
        }),
        taxonomy,
      ),
    ).toEqual(
      Either.left([
        {
          path: "market.rivals[2]",
          message: '"Salesforse" is not a product or vendor of the taxonomy; did you mean "Salesforce"?',
        },
        {
          path: "market.rivals[3]",
          message: '"hubspot" is not a product or vendor of the taxonomy; did you mean "HubSpot"?',
        },
        {
          path: "market.rivals[4]",
          message:
            '"Nothing Like It" is not a product or vendor of the taxonomy; expected a product or vendor as the taxonomy names it',
        },
      ]),
    )
  })

  it("with no taxonomy to check against, keeps a name as a product and as a vendor", () => {
    expect(Market.entriesOf(market({ rivals: ["HubSpot"] }), { products: [], vendors: [] })).toEqual(
      Either.right([
        { role: "rival", product: "HubSpot", vendor: null },
        { role: "rival", product: null, vendor: "HubSpot" },
      ]),
    )
  })
})
