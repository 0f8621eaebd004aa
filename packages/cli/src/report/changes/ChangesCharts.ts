/**
 * The chart of the "what changed" sections (ChangesData.ts), drawn like every chart of the report
 * (shared/Chart.ts): per run, the technologies adopted and dropped beside the job changes (the
 * job changes by department and level are drawn as the overview's contacts are, OverviewCharts.ts).
 */

import { type Chart, textStyle, valueLabel, width } from "../shared/Chart.ts"
import type * as ChangesData from "./ChangesData.ts"

/** A run as the change sections name it: "#12", or "no run" for changes loaded outside one. */
export const changeRunLabel = (runId: number | null): string => (runId === null ? "no run" : `#${runId}`)

const technologyBar = (name: string, values: Array<number>) => ({
  type: "bar" as const,
  name,
  stack: "technologies",
  barMaxWidth: 60,
  label: valueLabel,
  data: values,
})

/**
 * Per run that found changes, two plots side by side, each with its own axis and title:
 * technologies adopted and dropped (stacked, drops below zero) at the left, job changes at the
 * right. Counts of different kinds never share a plot, so a bar's height is compared only with
 * counts of its kind (on one plot with two axes, 8 adoptions stood as tall as 37 job changes);
 * every bar is labelled with its number.
 */
export const changes = (rows: ReadonlyArray<ChangesData.RunChanges>): Chart => {
  // Symmetric about zero, so drops go down as far as adoptions go up.
  const technologies = Math.max(1, ...rows.flatMap((row) => [row.adopted, row.dropped]))
  const runs = rows.map((row) => changeRunLabel(row.runId))
  const plotTitle = (text: string, left: string) => ({
    text,
    left,
    top: 30,
    textAlign: "center" as const,
    textStyle: { ...textStyle, fontSize: 13, fontWeight: "normal" as const },
  })
  return {
    width,
    height: 400,
    option: {
      textStyle,
      legend: { top: 0, itemGap: 18 },
      title: [plotTitle("technologies adopted and dropped", "27%"), plotTitle("job changes", "77%")],
      grid: [
        { left: 20, width: "44%", top: 70, bottom: 10, containLabel: true },
        { right: 20, width: "44%", top: 70, bottom: 10, containLabel: true },
      ],
      xAxis: [
        { type: "category", gridIndex: 0, data: runs },
        { type: "category", gridIndex: 1, data: runs },
      ],
      yAxis: [
        { type: "value", gridIndex: 0, minInterval: 1, min: -technologies, max: technologies },
        { type: "value", gridIndex: 1, minInterval: 1, min: 0 },
      ],
      series: [
        technologyBar(
          "technologies adopted",
          rows.map((row) => row.adopted),
        ),
        technologyBar(
          "technologies dropped",
          rows.map((row) => -row.dropped),
        ),
        {
          type: "bar",
          name: "job changes",
          xAxisIndex: 1,
          yAxisIndex: 1,
          barMaxWidth: 60,
          label: valueLabel,
          data: rows.map((row) => row.jobChanges),
        },
      ],
    },
  }
}
