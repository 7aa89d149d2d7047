import type { Field } from '../catalog/catalog.js';
import type { DbRow, ReadDb } from './db.js';
import { isKnownTimeField, join, sql } from './sql.js';
import type { Value } from '../model/values.js';
import { columnOf, columnValues, type ValueColumn, type ValueColumns } from '../model/value-columns.js';

/** Stamps whose knowledge instant is kept per process before the map starts again. */
const KEPT = 100_000;
/** Stamps looked up per statement. */
const LOOKUP = 500;
const JSON_TAIL = '"created_at":"';

/**
 * The answer side of knowledge time (sql.ts knownStamp): a stored stamp (a revision's
 * valid_from / valid_to, a row's created_at) is answered as the instant its change became
 * known, recorded in mds_changes. Recorded instants never change, so each is looked up once
 * per process; a stamp without a record (written before they were recorded) is its own.
 */
export class KnownTimes {
  private readonly known = new Map<string, Map<string, string>>();
  /** Per dataset: its first recorded stamp; every stamp up to it is its own instant. */
  private readonly floors = new Map<string, string>();
  private size = 0;

  constructor(private readonly db: ReadDb) {}

  /**
   * The dataset's first recorded stamp (null: none recorded yet). Every later stamp has a
   * record, so a later one without (read on a replica that lags the one that served the row)
   * is not kept as its own instant.
   */
  private async floor(d: string): Promise<string | null> {
    const kept = this.floors.get(d);
    if (kept !== undefined) return kept;
    const [v] = await this.db.values(
      sql`SELECT min(valid_from) FROM mds_changes WHERE dataset = ${d} AND valid_from > ''`,
    );
    if (typeof v !== 'string') return null;
    this.floors.set(d, v);
    return v;
  }

  /** The knowledge instant of each stamp in `stamps` of dataset `d`, looked up when not kept. */
  private async mapper(d: string, stamps: Iterable<string>): Promise<(s: string) => string> {
    const before = this.known.get(d);
    const missing = new Set<string>();
    for (const s of stamps) if (!before?.has(s)) missing.add(s);
    if (missing.size > 0 && this.size + missing.size > KEPT) {
      this.known.clear();
      this.size = 0;
    }
    const kept = this.known.get(d) ?? new Map<string, string>();
    this.known.set(d, kept);
    if (missing.size > 0) {
      const all = [...missing];
      for (let i = 0; i < all.length; i += LOOKUP) {
        const part = all.slice(i, i + LOOKUP);
        const rows = await this.db.rows(
          sql`SELECT valid_from, known_at FROM mds_changes WHERE dataset = ${d} AND valid_from IN (${join(part.map((s) => sql`${s}`))})`,
        );
        for (const r of rows) kept.set(String(r.valid_from), String(r.known_at));
      }
      const floor = all.some((s) => !kept.has(s)) ? await this.floor(d) : null;
      for (const s of all) if (!kept.has(s) && floor !== null && s <= floor) kept.set(s, s);
      this.size += missing.size;
    }
    return (s) => kept.get(s) ?? s;
  }

  /** Rows of `fields` (api names) in place: every knowledge-time field answered as its instant. */
  async objects(d: string, fields: readonly Field[], rows: (DbRow | Record<string, Value>)[]): Promise<void> {
    const names = fields.filter(isKnownTimeField).map((f) => f.apiName);
    if (names.length === 0 || rows.length === 0) return;
    const stamps = new Set<string>();
    for (const r of rows) for (const n of names) if (typeof r[n] === 'string') stamps.add(r[n]);
    const at = await this.mapper(d, stamps);
    for (const r of rows) for (const n of names) if (typeof r[n] === 'string') r[n] = at(r[n]);
  }

  /**
   * A chunk of `fields`' columns, in place (the exports). A column is rebuilt only when one of its
   * stamps answers as another instant: most chunks' stamps are their own instants.
   */
  async columns(d: string, fields: readonly Field[], chunk: ValueColumns): Promise<void> {
    const at = fields.flatMap((f, i) => (isKnownTimeField(f) && chunk.columns[i] ? [i] : []));
    if (at.length === 0 || chunk.length === 0) return;
    const values = at.map((i) => columnValues(chunk.columns[i] as ValueColumn, chunk.length));
    const stamps = new Set<string>();
    for (const vs of values) for (const v of vs) if (typeof v === 'string') stamps.add(v);
    const of = await this.mapper(d, stamps);
    if ([...stamps].every((s) => of(s) === s)) return;
    at.forEach((i, k) => {
      chunk.columns[i] = columnOf((values[k] as Value[]).map((v) => (typeof v === 'string' ? of(v) : v)));
    });
  }

  /** Whole rows' response JSON (sql.ts ROW_JSON_SELECT: created_at last): its created_at answered as its instant. */
  async json(d: string, rows: (string | null)[]): Promise<(string | null)[]> {
    if (rows.length === 0) return rows;
    const cut = (j: string): number => j.lastIndexOf(JSON_TAIL) + JSON_TAIL.length;
    const stamps = new Set<string>();
    for (const j of rows) if (j !== null) stamps.add(j.slice(cut(j), -2));
    const at = await this.mapper(d, stamps);
    return rows.map((j) => {
      if (j === null) return j;
      const i = cut(j);
      const s = j.slice(i, -2);
      const k = at(s);
      return k === s ? j : `${j.slice(0, i)}${k}"}`;
    });
  }
}
