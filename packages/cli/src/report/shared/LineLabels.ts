/**
 * The value labels of the report's line charts, placed so that none covers another. ECharts'
 * own label shifting needs text measured on a canvas, which its server-side renderer has not,
 * so the charts fix their plot's box and scale and the labels are placed here: left of the first
 * month's points and right of the last's (where no line runs), above the points between, and
 * where points of one month sit closer than a label's height, the labels are spread apart (the
 * nearest free place, kept inside the plot).
 */

export interface ShareScale {
  /** The axis's top, in percent. */
  readonly max: number
  readonly interval: number
}

// Tops and steps of a share axis from 0: five or so gridlines whatever the shares are.
const scales: ReadonlyArray<ShareScale> = [
  { max: 1, interval: 0.2 },
  { max: 2, interval: 0.5 },
  { max: 5, interval: 1 },
  { max: 10, interval: 2 },
  { max: 20, interval: 5 },
  { max: 40, interval: 10 },
  { max: 60, interval: 10 },
  { max: 80, interval: 20 },
  { max: 100, interval: 20 },
]

/** The smallest axis from 0 that holds `highest` percent with a tenth to spare for its label. */
export const shareScale = (highest: number): ShareScale =>
  scales.find((scale) => scale.max >= Math.min(100, highest * 1.1)) ?? { max: 100, interval: 20 }

export interface Plot {
  /** The plot's top and height in pixels (the grid's box), and its axis's top. */
  readonly top: number
  readonly height: number
  readonly max: number
}

export type Place = "left" | "right" | "top"

/** Where the label of a point of month `month` of `months` goes. */
export const placeOf = (month: number, months: number): Place =>
  month === months - 1 ? "right" : month === 0 ? "left" : "top"

/**
 * Pixels between a point and the centre of its label: above it for "top" (ECharts' place: 5 plus
 * half a line), level with it beside it.
 */
const above = (place: Place, fontSize: number): number => (place === "top" ? 5 + fontSize / 2 : 0)

/**
 * The centres `wanted` (sorted by the caller) moved as little as this simple pass does so that
 * each is `gap` below the one before, between `low` and `high`: down from the top first, then
 * back up from the bottom for those pushed past it.
 */
const spread = (wanted: ReadonlyArray<number>, gap: number, low: number, high: number): Array<number> => {
  const placed: Array<number> = []
  for (const [index, centre] of wanted.entries())
    placed.push(Math.max(centre, low, index === 0 ? low : (placed[index - 1] ?? low) + gap))
  for (let index = placed.length - 1; index >= 0; index--) {
    const limit = index === placed.length - 1 ? high : (placed[index + 1] ?? high) - gap
    placed[index] = Math.min(placed[index] ?? limit, limit)
  }
  return placed
}

/**
 * For lines of values (percent; null: no point), the vertical offset of each point's label from
 * its place (placeOf), so that no two labels of a month overlap (`gap`: a label's height and a
 * little air).
 */
export const labelOffsets = (
  plot: Plot,
  lines: ReadonlyArray<ReadonlyArray<number | null>>,
  fontSize: number,
): ReadonlyArray<ReadonlyArray<number>> => {
  const gap = fontSize + 3
  const offsets = lines.map((line) => line.map(() => 0))
  const months = Math.max(0, ...lines.map((line) => line.length))
  for (let month = 0; month < months; month++) {
    const lift = above(placeOf(month, months), fontSize)
    const points = lines.flatMap((line, index) => {
      const value = line[month]
      if (value === null || value === undefined) return []
      const y = plot.top + plot.height * (1 - value / plot.max)
      return [{ index, wanted: y - lift }]
    })
    points.sort((one, other) => one.wanted - other.wanted || one.index - other.index)
    const placed = spread(
      points.map((point) => point.wanted),
      gap,
      plot.top + fontSize / 2,
      plot.top + plot.height - fontSize / 2,
    )
    for (const [rank, point] of points.entries()) {
      const row = offsets[point.index]
      if (row !== undefined) row[month] = (placed[rank] ?? point.wanted) - point.wanted
    }
  }
  return offsets
}
