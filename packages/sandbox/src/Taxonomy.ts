// The technology taxonomy: categories, subcategories, products and vendors, and how popular
// each product is. A few products are used almost everywhere and a long tail by few
// companies, so adoption analytics over the sandbox look like real technographics.
import { hash } from "./Random.ts"

export interface Product {
  readonly id: number
  readonly product: string
  readonly vendor: string
  readonly category: string
  readonly subcategory: string
  /** Relative chance that a company uses it. */
  readonly popularity: number
}

export interface Category {
  readonly category: string
  readonly subcategories: readonly string[]
}

export interface Taxonomy {
  readonly categories: readonly Category[]
  readonly products: readonly Product[]
}

type Tree = Record<string, Record<string, ReadonlyArray<readonly [product: string, vendor: string]>>>

// Well-known products, most common first within each subcategory.
const known: Tree = {
  Marketing: {
    "Marketing Automation": [
      ["HubSpot Marketing Hub", "HubSpot"],
      ["Marketo Engage", "Adobe"],
      ["Pardot", "Salesforce"],
      ["Mailchimp", "Intuit"],
    ],
    "Web Analytics": [
      ["Google Analytics", "Google"],
      ["Adobe Analytics", "Adobe"],
      ["Mixpanel", "Mixpanel"],
      ["Hotjar", "Contentsquare"],
    ],
    "Tag Management": [
      ["Google Tag Manager", "Google"],
      ["Tealium iQ", "Tealium"],
    ],
  },
  Sales: {
    CRM: [
      ["Salesforce Sales Cloud", "Salesforce"],
      ["HubSpot CRM", "HubSpot"],
      ["Microsoft Dynamics 365", "Microsoft"],
      ["Pipedrive", "Pipedrive"],
      ["Zoho CRM", "Zoho"],
    ],
    "Sales Engagement": [
      ["Outreach", "Outreach"],
      ["Salesloft", "Salesloft"],
    ],
  },
  Collaboration: {
    "Office Suites": [
      ["Microsoft 365", "Microsoft"],
      ["Google Workspace", "Google"],
    ],
    "Team Chat": [
      ["Slack", "Salesforce"],
      ["Microsoft Teams", "Microsoft"],
    ],
    "Video Conferencing": [
      ["Zoom", "Zoom Video Communications"],
      ["Webex", "Cisco"],
    ],
  },
  "Cloud Infrastructure": {
    "Cloud Hosting": [
      ["Amazon Web Services", "Amazon"],
      ["Microsoft Azure", "Microsoft"],
      ["Google Cloud Platform", "Google"],
    ],
    CDN: [
      ["Cloudflare", "Cloudflare"],
      ["Akamai", "Akamai"],
      ["Fastly", "Fastly"],
    ],
  },
  "Web Platforms": {
    CMS: [
      ["WordPress", "Automattic"],
      ["Drupal", "Drupal Association"],
      ["Adobe Experience Manager", "Adobe"],
    ],
    Ecommerce: [
      ["Shopify", "Shopify"],
      ["Magento", "Adobe"],
      ["BigCommerce", "BigCommerce"],
    ],
  },
  "Data and Analytics": {
    "Business Intelligence": [
      ["Tableau", "Salesforce"],
      ["Power BI", "Microsoft"],
      ["Looker", "Google"],
    ],
    Databases: [
      ["PostgreSQL", "PostgreSQL Global Development Group"],
      ["MySQL", "Oracle"],
      ["MongoDB", "MongoDB"],
      ["Snowflake", "Snowflake"],
    ],
  },
  Security: {
    "Identity and Access": [
      ["Okta", "Okta"],
      ["Microsoft Entra ID", "Microsoft"],
    ],
    "Endpoint Security": [
      ["CrowdStrike Falcon", "CrowdStrike"],
      ["SentinelOne", "SentinelOne"],
    ],
  },
  "Customer Support": {
    Helpdesk: [
      ["Zendesk", "Zendesk"],
      ["Freshdesk", "Freshworks"],
      ["ServiceNow", "ServiceNow"],
    ],
    "Live Chat": [
      ["Intercom", "Intercom"],
      ["Drift", "Salesloft"],
    ],
  },
  "Human Resources": {
    HRIS: [
      ["Workday HCM", "Workday"],
      ["BambooHR", "BambooHR"],
      ["ADP Workforce Now", "ADP"],
    ],
    Recruiting: [
      ["Greenhouse", "Greenhouse"],
      ["Lever", "Employ"],
    ],
  },
  Finance: {
    ERP: [
      ["SAP S/4HANA", "SAP"],
      ["Oracle NetSuite", "Oracle"],
    ],
    Accounting: [
      ["QuickBooks", "Intuit"],
      ["Xero", "Xero"],
    ],
    Payments: [
      ["Stripe", "Stripe"],
      ["PayPal", "PayPal"],
    ],
  },
  "Developer Tools": {
    "Source Control": [
      ["GitHub", "Microsoft"],
      ["GitLab", "GitLab"],
      ["Bitbucket", "Atlassian"],
    ],
    "Project Management": [
      ["Jira", "Atlassian"],
      ["Asana", "Asana"],
      ["Monday.com", "monday.com"],
    ],
  },
}

// The handful of products nearly everybody runs, and how common they are.
const headline: Record<string, number> = {
  "Google Analytics": 60,
  "Microsoft 365": 55,
  "Google Tag Manager": 45,
  "Amazon Web Services": 40,
  WordPress: 35,
  "Google Workspace": 30,
  Zoom: 28,
  Slack: 25,
  Cloudflare: 22,
  "Salesforce Sales Cloud": 20,
}

const tailVendorParts = [
  "Stack",
  "Flow",
  "Grid",
  "Pulse",
  "Forge",
  "Wave",
  "Loop",
  "Scope",
  "Mint",
  "Bolt",
] as const
const tailVendorStarts = [
  "Nova",
  "Kite",
  "Orbit",
  "Prism",
  "Quill",
  "Rally",
  "Sable",
  "Tango",
  "Umbra",
  "Vivid",
] as const
const tailProductKinds = ["Cloud", "Suite", "Hub", "Pro", "One", "Insights"] as const

/** The taxonomy for a seed: the well-known products plus a seeded long tail per subcategory. */
export const buildTaxonomy = (seed: number, tailPerSubcategory = 6): Taxonomy => {
  const products: Product[] = []
  const categories: Category[] = []
  let subIndex = 0
  for (const [category, subs] of Object.entries(known)) {
    categories.push({ category, subcategories: Object.keys(subs) })
    for (const [subcategory, entries] of Object.entries(subs)) {
      entries.forEach(([product, vendor], rank) => {
        const popularity = headline[product] ?? 10 / (rank + 1)
        products.push({ id: products.length, product, vendor, category, subcategory, popularity })
      })
      for (let t = 0; t < tailPerSubcategory; t++) {
        const h = hash(seed, subIndex * 100 + t, 901)
        const vendor = `${tailVendorStarts[h % 10]}${tailVendorParts[(h >>> 8) % 10]}`
        const product = `${vendor} ${subcategory} ${tailProductKinds[(h >>> 16) % 6]}`
        if (products.some((p) => p.product === product)) continue
        products.push({
          id: products.length,
          product,
          vendor,
          category,
          subcategory,
          popularity: 0.3 + (h % 100) / 100,
        })
      }
      subIndex++
    }
  }
  return { categories, products }
}
