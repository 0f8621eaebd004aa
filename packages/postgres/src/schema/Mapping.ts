/**
 * How a stream's records become rows: take the record as the source decoded it (in process) or
 * decode it with its registry entry (from JSON lines), take each column's value through its table
 * description, and encode the row as a COPY line at once (a batch then holds compact strings, not
 * objects). Child tables (phones, technologies) get one row per item of a list in the record,
 * numbered by position.
 */
import { type Message, Streams } from "@salesintel/airbyte"
import type { ParseIssue } from "@salesintel/core"
import * as Either from "effect/Either"
import { encodeCell, JsonText } from "./CopyText.ts"
import { type Column, type ColumnType, column, type Table, type TableShape } from "./Table.ts"

/** A decoded record with its raw JSON (kept whole in `_raw`). */
export interface Source<R> {
  readonly record: R
  /** The record's data as received: the provider's JSON and the source's added fields. */
  readonly raw: Message.JsonObject
  /** `raw` as JSON text for a jsonb cell: the input line's text when it had one, else `raw`. */
  readonly rawJson: JsonText | Message.JsonObject
}

/** One item of a record's list, for a child table. */
export interface ChildSource<R, I> {
  /** The record the list belongs to. */
  readonly parent: Source<R>
  readonly item: I
  /** 0-based position of the item in the record's list. */
  readonly position: number
}

export interface ChildMapping<R> {
  readonly table: TableShape
  /**
   * The child column holding its parent's key (`table.parent.key`): the parent's rows are
   * replaced with it. Undefined for a table keyed by its own columns (`ChildTable.key`), whose
   * rows are upserted by that key instead and never deleted with a parent.
   */
  readonly parentKey: string | undefined
  readonly lines: (parent: Source<R>) => ReadonlyArray<string>
}

/**
 * A child table as described: one row per item of a list in the record, with its own columns. The
 * parent's key column and the item's position are added in front, and are the child's key.
 */
export interface ChildTable<R, I> {
  readonly name: string
  readonly doc: string
  /** The record's field that holds the list (named in the position column's doc). */
  readonly list: string
  readonly items: (record: R) => ReadonlyArray<I> | null | undefined
  readonly columns: ReadonlyArray<Column<ChildSource<R, I>>>
  /**
   * For a list of things that exist apart from the record (a contact's company sites, which every
   * contact of the company lists): the child's own key columns. Its rows are then one per key,
   * upserted (the latest loaded wins) rather than replaced with their parent, and carry neither
   * the parent's key nor a position; an item without a key value is skipped.
   */
  readonly key?: ReadonlyArray<string>
}

/** A record mapped to COPY lines: its main row and, per child table, its child rows. */
export interface Mapped {
  /** The record's primary key as one string, to keep the newest record per key in a batch. */
  readonly key: string
  /**
   * When the source fetched the record (its `_salesintel_fetched_at`, epoch milliseconds), or
   * undefined when it says none (then it counts as fetched when loaded: the newest).
   */
  readonly fetchedAt?: number
  readonly line: string
  readonly children: ReadonlyArray<ReadonlyArray<string>>
}

export interface StreamMapping<Name extends Streams.StreamName = Streams.StreamName> {
  readonly stream: Name
  readonly table: TableShape
  readonly children: ReadonlyArray<Omit<ChildMapping<never>, "lines">>
  readonly map: (message: Message.RecordMessage) => Either.Either<Mapped, ParseIssue.ParseIssue>
}

const typesOf = (table: TableShape): ReadonlyArray<ColumnType> =>
  table.columns.map((tableColumn) => tableColumn.type)

/**
 * A child table, described for `defineStream`'s `children`: given its parent (which must have a
 * single-column primary key), its full description and how its rows are made.
 */
export const child =
  <R, I>(spec: ChildTable<R, I>) =>
  (parent: Table<Source<R>>): ChildMapping<R> => {
    if (spec.key !== undefined) return keyedChild(spec)
    const [keyName, ...more] = parent.primaryKey
    const key = parent.columns.find((candidate) => candidate.name === keyName)
    // Checked as the table descriptions load: a wrong description fails every test that loads them.
    if (key === undefined || more.length > 0)
      throw new Error(`${spec.name}: its parent ${parent.name} needs a single-column primary key`)
    const table: Table<ChildSource<R, I>> = {
      name: spec.name,
      doc: spec.doc,
      primaryKey: [key.name, "position"],
      parent: { table: parent.name, key: key.name },
      columns: [
        column(key.name, key.type, `${parent.name}.${key.name}`, (s) => key.value(s.parent), {
          notNull: true,
        }),
        column("position", "integer", `0-based position in ${spec.list}`, (s) => s.position, {
          notNull: true,
        }),
        ...spec.columns,
      ],
    }
    const types = typesOf(table)
    const values = table.columns.map((tableColumn) => tableColumn.value)
    return {
      table,
      parentKey: key.name,
      lines: (parentSource) => {
        const items = spec.items(parentSource.record)
        if (items === null || items === undefined || items.length === 0) return []
        const lines: Array<string> = new Array(items.length)
        for (const [position, item] of items.entries())
          lines[position] = encodeLine(types, values, { parent: parentSource, item, position })
        return lines
      },
    }
  }

/** A child table keyed by its own columns (see `ChildTable.key`). */
const keyedChild = <R, I>(spec: ChildTable<R, I>): ChildMapping<R> => {
  const keyNames = spec.key ?? []
  const table: Table<ChildSource<R, I>> = {
    name: spec.name,
    doc: spec.doc,
    primaryKey: keyNames,
    columns: spec.columns.map((tableColumn) =>
      keyNames.includes(tableColumn.name) ? { ...tableColumn, notNull: true } : tableColumn,
    ),
  }
  const keyValues = keyNames.map((name) => {
    const keyColumn = table.columns.find((candidate) => candidate.name === name)
    // Checked as the table descriptions load: a wrong description fails every test that loads them.
    if (keyColumn === undefined) throw new Error(`${spec.name}: its key ${name} is not one of its columns`)
    return keyColumn.value
  })
  const types = typesOf(table)
  const values = table.columns.map((tableColumn) => tableColumn.value)
  return {
    table,
    parentKey: undefined,
    lines: (parentSource) => {
      const items = spec.items(parentSource.record)
      if (items === null || items === undefined || items.length === 0) return []
      const lines: Array<string> = []
      for (const [position, item] of items.entries()) {
        const childSource = { parent: parentSource, item, position }
        if (keyValues.some((value) => value(childSource) === null || value(childSource) === undefined))
          continue
        lines.push(encodeLine(types, values, childSource))
      }
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

/** A record's `_salesintel_fetched_at` in epoch milliseconds, when it has a valid one. */
const fetchedAtOf = (data: Message.JsonObject): number | undefined => {
  const value = data[Streams.addedFields.fetchedAt]
  const millis = typeof value === "string" ? Date.parse(value) : Number.NaN
  return Number.isNaN(millis) ? undefined : millis
}

export const defineStream = <Name extends Streams.StreamName, R>(spec: {
  readonly stream: Streams.StreamEntry<R> & { readonly name: Name }
  // R comes from the registry entry alone; the table, key and children are checked against it.
  readonly table: Table<Source<NoInfer<R>>>
  readonly key: (record: NoInfer<R>) => string
  /** One child table per list in the record, built with `child`. */
  readonly children?: ReadonlyArray<(parent: Table<Source<NoInfer<R>>>) => ChildMapping<NoInfer<R>>>
}): StreamMapping<Name> => {
  const entry = spec.stream
  const types = typesOf(spec.table)
  const values = spec.table.columns.map((tableColumn) => tableColumn.value)
  const children = (spec.children ?? []).map((makeChild) => makeChild(spec.table))
  return {
    stream: entry.name,
    table: spec.table,
    children: children.map(({ table, parentKey }) => ({ table, parentKey })),
    map: (message) => {
      const { data } = message.record
      // Decoded once: in process the source hands over its value; from a pipe, decode here.
      let record: R
      if (Streams.isDecodedBy(entry, message.decoded)) record = message.decoded.value
      else {
        const decoded = entry.decode(data)
        if (Either.isLeft(decoded)) return Either.left(decoded.left)
        record = decoded.right
      }
      const rawJson = message.dataText === undefined ? data : new JsonText(message.dataText)
      const source: Source<R> = { record, raw: data, rawJson }
      const fetchedAt = fetchedAtOf(data)
      return Either.right({
        key: spec.key(record),
        ...(fetchedAt === undefined ? {} : { fetchedAt }),
        line: encodeLine(types, values, source),
        children: children.map((childMapping) => childMapping.lines(source)),
      })
    },
  }
}
