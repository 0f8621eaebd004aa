/**
 * How a stream's records become rows: decode the record with the core's lenient schema, take each
 * column's value through its table description, and encode the row as a COPY line at once (a
 * batch then holds compact strings, not objects). Child tables (phones, technologies) get one row
 * per item of a list in the record, numbered by position.
 */
import { ParseIssue } from "@salesintel/core"
import { Either, Schema } from "effect"
import { encodeCell } from "./CopyText.ts"
import { type Fast, miss } from "./FastDecode.ts"
import type { ColumnType, Table, TableShape } from "./Table.ts"

/** A decoded record with its raw JSON (kept whole in `_raw`). */
export interface Source<R> {
  readonly record: R
  readonly raw: Readonly<Record<string, unknown>>
}

/** One item of a record's list, for a child table. */
export interface ChildSource<R, I> {
  readonly record: R
  readonly item: I
  /** 0-based position of the item in the record's list. */
  readonly position: number
}

export interface ChildMapping<R> {
  readonly table: TableShape
  /** The child column holding its parent's key (`table.parent.key`); the batch key is its value. */
  readonly parentKey: string
  readonly lines: (record: R) => ReadonlyArray<string>
}

/** A record mapped to COPY lines: its main row and, per child table, its child rows. */
export interface Mapped {
  /** The record's primary key as one string, to keep the latest record per key in a batch. */
  readonly key: string
  readonly line: string
  readonly children: ReadonlyArray<ReadonlyArray<string>>
}

export interface StreamMapping {
  readonly stream: string
  readonly table: TableShape
  readonly children: ReadonlyArray<Omit<ChildMapping<never>, "lines">>
  readonly map: (data: unknown) => Either.Either<Mapped, ParseIssue.ParseIssue>
}

const typesOf = (table: TableShape): ReadonlyArray<ColumnType> => table.columns.map((column) => column.type)

export const child = <R, I>(spec: {
  readonly table: Table<ChildSource<R, I>> & { readonly parent: NonNullable<TableShape["parent"]> }
  readonly items: (record: R) => ReadonlyArray<I> | null | undefined
}): ChildMapping<R> => {
  const types = typesOf(spec.table)
  const values = spec.table.columns.map((column) => column.value)
  return {
    table: spec.table,
    parentKey: spec.table.parent.key,
    lines: (record) => {
      const items = spec.items(record)
      if (items === null || items === undefined || items.length === 0) return []
      const lines: Array<string> = new Array(items.length)
      for (let position = 0; position < items.length; position++)
        lines[position] = encodeLine(types, values, { record, item: items[position] as I, position })
      return lines
    },
  }
}

/** The source's row as one COPY line (without the newline). */
const encodeLine = <S>(
  types: ReadonlyArray<ColumnType>,
  values: ReadonlyArray<(source: S) => unknown>,
  source: S,
): string => {
  // One flat string (a join, not a chain of concatenations): a batch holds compact lines that
  // keep neither the cells' pieces nor the input block they were cut from alive.
  const cells: Array<string> = new Array(types.length)
  for (let index = 0; index < types.length; index++)
    cells[index] = encodeCell(types[index]!, values[index]!(source))
  return cells.join("\t")
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const defineStream = <R, I>(spec: {
  readonly stream: string
  readonly schema: Schema.Schema<R, I>
  readonly table: Table<Source<R>>
  readonly key: (record: R) => string
  readonly children: ReadonlyArray<ChildMapping<R>>
  /**
   * A hand-written decoder for records in the expected shape (FastDecode.ts): it returns the same
   * value as the schema, or `miss` when unsure, and then the schema decodes (or reports the error).
   */
  readonly fast?: Fast<R>
}): StreamMapping => {
  const decode = Schema.decodeUnknownEither(spec.schema)
  const fast = spec.fast
  const types = typesOf(spec.table)
  const values = spec.table.columns.map((column) => column.value)
  return {
    stream: spec.stream,
    table: spec.table,
    children: spec.children.map(({ table, parentKey }) => ({ table, parentKey })),
    map: (data) => {
      if (!isObject(data)) return Either.left({ path: "(root)", description: "expected a JSON object" })
      let record = fast === undefined ? miss : fast(data)
      if (record === miss) {
        const decoded = decode(data)
        if (Either.isLeft(decoded)) return Either.left(ParseIssue.fromParseError(decoded.left))
        record = decoded.right
      }
      const decodedRecord: R = record
      const source: Source<R> = { record: decodedRecord, raw: data }
      return Either.right({
        key: spec.key(decodedRecord),
        line: encodeLine(types, values, source),
        children: spec.children.map((childMapping) => childMapping.lines(decodedRecord)),
      })
    },
  }
}
