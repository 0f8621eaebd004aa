/**
 * Where the texts of a chart's SVG (ECharts' server-side renderer) sit on the picture: each
 * `<text>`'s box from its transform, offsets, anchor, baseline and font size, its width measured
 * the way ECharts measures it without a canvas (Arial's widths; the report asks for Arial or a
 * font of its metrics, so a browser draws the same widths). Tests use it to check that no two
 * texts of a chart overlap.
 */
import * as echarts from "echarts"

export interface TextBox {
  readonly text: string
  /**
   * The text's transform and line: the lines of one label share its transform, each at its own
   * y (one label, not two); two texts of the same transform and y are two labels in one place.
   */
  readonly label: string | undefined
  readonly line: number
  readonly left: number
  readonly top: number
  readonly right: number
  readonly bottom: number
}

const attribute = (attributes: string, name: string): string | undefined =>
  new RegExp(`\\s${name}="([^"]*)"`).exec(attributes)?.[1]

const decoded = (text: string): string =>
  text
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&amp;", "&")

/** The transform as a matrix [a, b, c, d, e, f] (translate and matrix: all ECharts writes on text). */
const matrixOf = (transform: string | undefined): ReadonlyArray<number> => {
  if (transform === undefined) return [1, 0, 0, 1, 0, 0]
  const numbers = (transform.match(/-?[\d.]+(?:e-?\d+)?/g) ?? []).map(Number)
  if (transform.startsWith("translate")) return [1, 0, 0, 1, numbers[0] ?? 0, numbers[1] ?? 0]
  if (transform.startsWith("matrix") && numbers.length === 6) return numbers
  throw new Error(`a text transform the test does not read: ${transform}`)
}

/** The top of a line of `size` pixels drawn at y, by its dominant-baseline. */
const topOf = (baseline: string | undefined, y: number, size: number): number => {
  if (baseline === "central" || baseline === "middle") return y - size / 2
  if (baseline === "hanging" || baseline === "text-before-edge") return y
  return y - size * 0.8
}

/** Every non-empty `<text>` of `svg` with the box it covers, in the SVG's coordinates. */
export const textBoxes = (svg: string): ReadonlyArray<TextBox> =>
  [...svg.matchAll(/<text\b([^>]*)>([^<]*)<\/text>/g)].flatMap(([, attributes = "", content = ""]) => {
    const text = decoded(content)
    if (text.trim().length === 0) return []
    const size = Number(/font-size:\s*([\d.]+)px/.exec(attributes)?.[1] ?? 12)
    const width = echarts.format.getTextRect(text, `${size}px Arial`).width
    const x = Number(attribute(attributes, "x") ?? 0)
    const y = Number(attribute(attributes, "y") ?? 0)
    const anchor = attribute(attributes, "text-anchor") ?? "start"
    const left = anchor === "middle" ? x - width / 2 : anchor === "end" ? x - width : x
    const top = topOf(attribute(attributes, "dominant-baseline"), y, size)
    const transform = attribute(attributes, "transform")
    const [a = 1, b = 0, c = 0, d = 1, e = 0, f = 0] = matrixOf(transform)
    const corners = [
      [left, top],
      [left + width, top],
      [left, top + size],
      [left + width, top + size],
    ].map(([px = 0, py = 0]) => [a * px + c * py + e, b * px + d * py + f] as const)
    const xs = corners.map(([cx]) => cx)
    const ys = corners.map(([, cy]) => cy)
    return [
      {
        text,
        label: transform,
        line: y,
        left: Math.min(...xs),
        top: Math.min(...ys),
        right: Math.max(...xs),
        bottom: Math.max(...ys),
      },
    ]
  })

/**
 * The pairs of boxes that overlap by more than `slack` pixels each way (touching is not
 * overlapping), the lines of one label left out.
 */
export const overlaps = (
  boxes: ReadonlyArray<TextBox>,
  slack = 0.5,
): ReadonlyArray<readonly [TextBox, TextBox]> =>
  boxes.flatMap((one, index) =>
    boxes
      .slice(index + 1)
      .filter(
        (other) =>
          (one.label === undefined || one.label !== other.label || one.line === other.line) &&
          Math.min(one.right, other.right) - Math.max(one.left, other.left) > slack &&
          Math.min(one.bottom, other.bottom) - Math.max(one.top, other.top) > slack,
      )
      .map((other) => [one, other] as const),
  )

/** The overlapping pairs as readable lines, for a test's failure message. */
export const describeOverlaps = (pairs: ReadonlyArray<readonly [TextBox, TextBox]>): ReadonlyArray<string> =>
  pairs.map(
    ([one, other]) =>
      `"${one.text}" [${one.left.toFixed(0)},${one.top.toFixed(0)} ${one.right.toFixed(0)},${one.bottom.toFixed(0)}] over "${other.text}" [${other.left.toFixed(0)},${other.top.toFixed(0)} ${other.right.toFixed(0)},${other.bottom.toFixed(0)}]`,
  )
