// The JSONL input of src/bench/load-throughput.ts (a copy of its generate(), which is not exported),
// for running one bench phase or scripts/noop-load.mjs alone:
//   BENCH_RECORDS=200000 node packages/postgres/scripts/bench-input.mjs /tmp/contacts.jsonl
import { createWriteStream } from "node:fs"

const records = Number(process.env.BENCH_RECORDS ?? 200_000)
const stateEvery = 10_000
const generate = async (path) => {
  const out = createWriteStream(path)
  const write = (line) =>
    out.write(`${line}\n`) ? Promise.resolve() : new Promise((resolve) => out.once("drain", resolve))
  for (let index = 0; index < records; index++) {
    const companyId = 4_400_000 + (index % 5_000)
    const data = {
      _score: null,
      match_id: `m-${index.toString(36)}`,
      doc_id: `d-42-${index}`,
      display_name: `Jessica Novak ${index}`,
      first_name: "Jessica",
      last_name: `Novak ${index}`,
      email: `jessica.novak${index}@granitekeystonerobotics.com`,
      personal_email: `jessicanovak${index}@icloud.com`,
      job_title: "IT Manager",
      job_level: ["mgr", "vp", "dir", "staff"][index % 4],
      job_department: ["it_is", "sales", "marketing"][index % 3],
      phone_numbers: [
        { type: "work_hq", value: `614993${index}` },
        { type: "mobile", value: `555${index}` },
      ],
      social_profiles: [{ type: "linkedin", url: `linkedin.com/in/jessica-novak-${index}` }],
      location: "Columbus, OH, US",
      location_type: "hq",
      position_location_id: null,
      addresses: [],
      company: {
        id: companyId,
        name: "Granitekeystone Robotics Co",
        domains: ["granitekeystonerobotics.com"],
        linkedin_url: "linkedin.com/company/granitekeystonerobotics",
        naics_codes: ["484121"],
        sic_codes: ["4213"],
        revenue: 41,
        actual_revenue: 41,
        predicted_revenue: 38,
        revenue_range: "$10M - $50M",
        size: 131,
        size_range: "50-199",
      },
      company_id: companyId,
      company_name: "Granitekeystone Robotics Co",
      company_domains: ["granitekeystonerobotics.com"],
      dates: { created_date: "1585357174668", last_modified_date: "1751025325591" },
      _salesintel_search: "managers",
      _salesintel_fetched_at: "2026-11-21T23:47:42.419Z",
    }
    await write(JSON.stringify({ type: "RECORD", record: { stream: "contacts", data, emitted_at: 1 } }))
    if ((index + 1) % stateEvery === 0 || index === records - 1)
      await write(
        JSON.stringify({
          type: "STATE",
          state: {
            type: "STREAM",
            stream: { stream_descriptor: { name: "contacts" }, stream_state: { upto: index + 1 } },
            sourceStats: { recordCount: stateEvery },
          },
        }),
      )
  }
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())))
}

await generate(process.argv[2])
