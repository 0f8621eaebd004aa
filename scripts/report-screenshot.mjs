#!/usr/bin/env node
// A screenshot of some sections of a report (`salesintel report`), as the READMEs show them:
// the page's title and the sections named, the others and the headline figures hidden, drawn
// by headless Chromium (Debian's `chromium`, or the one CHROMIUM names) 1100 pixels wide.
//
//   node scripts/report-screenshot.mjs <report.html> <out.png> <section id>...
//
// The "Your market" sections of the demo's report (packages/cli/docs/report-market.png):
//
//   npm run demo
//   npx salesintel report --pglite-dir ./.salesintel/demo --out /tmp/report.html
//   node scripts/report-screenshot.mjs /tmp/report.html packages/cli/docs/report-market.png \
//     market-share market-opportunities market-affinity
//
// A section's id is its anchor in the page (the links under the title); an id the page does not
// have is an error, so a renamed section is not silently left out of the picture.
import { existsSync } from "node:fs"
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import puppeteer from "puppeteer-core"

const usage = "usage: node scripts/report-screenshot.mjs <report.html> <out.png> <section id>..."
const [input, output, ...sections] = process.argv.slice(2)
if (input === undefined || output === undefined || sections.length === 0) {
  console.error(usage)
  process.exit(2)
}
const chromium = process.env.CHROMIUM ?? "/usr/bin/chromium"
if (!existsSync(chromium)) {
  console.error(`no Chromium at ${chromium}: install Debian's chromium, or name one in CHROMIUM`)
  process.exit(1)
}

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--hide-scrollbars"],
})
try {
  const page = await browser.newPage()
  await page.setViewport({ width: 1100, height: 800 })
  await page.goto(pathToFileURL(resolve(input)).href, { waitUntil: "load" })
  const missing = await page.evaluate((wanted) => {
    const ids = [...document.querySelectorAll("section")].map((section) => section.id)
    for (const section of document.querySelectorAll("section"))
      if (!wanted.includes(section.id)) section.style.display = "none"
    for (const hidden of document.querySelectorAll(".figures, nav")) hidden.style.display = "none"
    return wanted.filter((id) => !ids.includes(id))
  }, sections)
  if (missing.length > 0) {
    console.error(`the report has no section ${missing.join(", ")}`)
    process.exitCode = 1
  } else {
    // The page as tall as what is left shown, taken whole (a full-page screenshot measured the
    // page before the other sections were hidden, and shrank the picture to that height).
    const height = await page.evaluate(() =>
      Math.ceil(document.documentElement.getBoundingClientRect().height),
    )
    await page.setViewport({ width: 1100, height })
    await page.screenshot({ path: output })
    console.log(`wrote ${output} (sections ${sections.join(", ")})`)
  }
} finally {
  await browser.close()
}
