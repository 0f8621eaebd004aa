/**
 * A market and its three views as fixed rows, for the report's "Your market" sections before
 * (and apart from) the loader's own views: the market table and a table in place of each view,
 * with the columns the views have. Whatever a loader made of them in the schema is dropped first,
 * so the fixture is the same on every loader.
 */
import { Sql } from "@salesintel/postgres"

const names = ["market_share_trend", "displacement_opportunities", "product_affinity", "market"]

/** The fixture's statements for `schema`. */
export const marketFixture = (schema: string): ReadonlyArray<string> => {
  const qualified = (name: string) => Sql.qualified(schema, name)
  return [
    // Each of the names dropped as what it is (a view, a materialized view or a table).
    `DO $$ DECLARE r record; BEGIN
       FOR r IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = ${Sql.literal(schema)} AND c.relname IN (${names.map(Sql.literal).join(", ")}) LOOP
         EXECUTE format(CASE r.relkind WHEN 'v' THEN 'DROP VIEW IF EXISTS %I.%I CASCADE'
           WHEN 'm' THEN 'DROP MATERIALIZED VIEW IF EXISTS %I.%I CASCADE' ELSE 'DROP TABLE IF EXISTS %I.%I CASCADE' END,
           ${Sql.literal(schema)}, r.relname);
       END LOOP;
     END $$`,
    `CREATE TABLE ${qualified("market")} (role text NOT NULL CHECK (role IN ('ours', 'rival', 'complement')), product text, vendor text)`,
    // Ours: a product, and every product of a vendor (product NULL).
    `INSERT INTO ${qualified("market")} VALUES ('ours', 'Asana', 'Asana'), ('ours', NULL, 'Notion Labs'),
     ('rival', 'Jira', 'Atlassian'), ('rival', 'Monday.com', 'monday.com'), ('complement', 'Slack', 'Salesforce')`,
    // Ours close behind the rivals', then level with them: labels that would sit on each other.
    `CREATE TABLE ${qualified("market_share_trend")} (month date, role text, companies_observed bigint, companies_using bigint, share numeric)`,
    `INSERT INTO ${qualified("market_share_trend")} VALUES
     ('2026-09-01', 'ours', 80, 24, 0.3), ('2026-09-01', 'rival', 80, 31, 0.3875), ('2026-09-01', 'complement', 80, 35, 0.4375),
     ('2026-10-01', 'ours', 90, 30, 0.3333), ('2026-10-01', 'rival', 90, 31, 0.3444), ('2026-10-01', 'complement', 90, 38, 0.4222),
     ('2026-11-01', 'ours', 100, 34, 0.34), ('2026-11-01', 'rival', 100, 34, 0.34), ('2026-11-01', 'complement', 100, 43, 0.43)`,
    `CREATE TABLE ${qualified("displacement_opportunities")} (reason text, company_id bigint, company_name text, company_domain text,
     company_size_range text, product text, vendor text, role text, happened_at timestamptz, evidence text, contact_id text, contact_name text)`,
    `INSERT INTO ${qualified("displacement_opportunities")} VALUES
     ('dropped a rival', 11, 'Acmesilver Analytics Holdings', 'acmesilveranalytics.com', '200-999', 'Jira', 'Atlassian', 'rival', '2026-11-20T10:00:00Z', 'Jira seen 2026-10-21, not seen 2026-11-20', NULL, NULL),
     ('dropped a rival', 12, 'Lumenacme Foods Technologies', 'lumenacmefoods.com', '1,000-4,999', 'Jira', 'Atlassian', 'rival', '2026-11-19T10:00:00Z', 'Jira seen 2026-10-20, not seen 2026-11-19', NULL, NULL),
     ('adopted a complement', 13, 'Terrafalcon Systems Ltd', 'terrafalconsystems.com', '50-199', 'Slack', 'Salesforce', 'complement', '2026-11-18T10:00:00Z', 'Slack not seen 2026-10-19, seen 2026-11-18', NULL, NULL),
     ('champion joined a rival account', 14, 'Redwoodblue Manufacturing Ltd', 'redwoodbluemanufacturing.com', '5,000+', 'Monday.com', 'monday.com', 'rival', '2026-11-17T10:00:00Z', 'Betty Lewis left River Robotics Technologies (uses Asana); Redwoodblue uses Monday.com', 'm-101', 'Betty Lewis'),
     ('champion joined a rival account', 15, 'Polarvertex Motors Group', 'polarvertexmotors.com', '200-999', 'Jira', 'Atlassian', 'rival', '2026-11-16T10:00:00Z', 'Elizabeth Lewis left Polarbeacon Media LLC (uses Asana); Polarvertex uses Jira', 'm-102', 'Elizabeth Lewis'),
     ('adopted a complement', 16, 'Graniteever Software LLC', 'graniteeversoftware.com', '1-49', 'Slack', 'Salesforce', 'complement', '2026-11-15T10:00:00Z', 'Slack not seen 2026-10-16, seen 2026-11-15', NULL, NULL),
     ('dropped a rival', 17, 'Deltapioneer Motors Holdings', 'deltapioneermotors.com', NULL, 'Monday.com', 'monday.com', 'rival', '2026-11-14T10:00:00Z', 'Monday.com seen 2026-10-15, not seen 2026-11-14', NULL, NULL)`,
    `CREATE TABLE ${qualified("product_affinity")} (product_a text, vendor_a text, product_b text, vendor_b text, companies_both bigint,
     companies_a bigint, companies_b bigint, companies_observed bigint, lift numeric)`,
    // One pair each way round, a pair of two of ours, and a pair without ours (not listed).
    `INSERT INTO ${qualified("product_affinity")} VALUES
     ('Asana', 'Asana', 'Slack', 'Salesforce', 15, 21, 43, 100, 1.6611),
     ('Google Workspace', 'Google', 'Asana', 'Asana', 9, 38, 21, 100, 1.1278),
     ('Notion', 'Notion Labs', 'Asana', 'Asana', 4, 6, 21, 100, 3.1746),
     ('Asana', 'Asana', 'Zoom', 'Zoom Video Communications', 3, 21, 44, 100, 0.3247),
     ('Jira', 'Atlassian', 'Slack', 'Salesforce', 20, 30, 43, 100, 1.5504)`,
  ]
}

/** What MarketData reads of the fixture: the pairs with ours, ours first, the most used together first. */
export const fixtureAffinity = [
  ["Asana", "Slack", 15, 1.6611],
  ["Asana", "Google Workspace", 9, 1.1278],
  ["Notion", "Asana", 4, 3.1746],
  ["Asana", "Zoom", 3, 0.3247],
] as const
