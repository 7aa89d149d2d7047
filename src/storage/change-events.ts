import type { Catalog, Dataset } from '../catalog/catalog.js';
import { changeKind, codeFieldOf, MAX_EVENT_CODES, type ChangeKind } from '../model/changes.js';
import { REV_OP } from '../model/revisions.js';
import type { Db, DbRow, Tx } from './db.js';
import { ident, join, raw, sql, type Sql } from './sql.js';
import type { Step } from './step.js';
import type { ChangePage, ChangeQuery, ChangeStore, StoredChange } from './store.js';

/**
 * The change feed's events (mds_events, docs/changes.md), written once for both backends. Each
 * change of a dataset's rows (a batch, a revert) records one event in its own transaction: what
 * it touched is summed up before the change's known instant is taken, and its id is taken from
 * the stored sequence (mds_feed) after it, the last statements before COMMIT. Taking the id
 * locks the sequence's row until COMMIT, so ids become visible in the order they were given:
 * a reader that sees id n sees every id below it, whichever process or instance wrote them.
 */

const FEED = 'events';

/** What a change touched, summed up from its revisions before its known instant. */
export interface ChangeSummary {
  dataset: string;
  kind: ChangeKind;
  batchId: string;
  version: number;
  counts: { insert: number; update: number; delete: number };
  codeCount: number;
  codes: string[] | null;
  codeFrom: string | null;
  codeTo: string | null;
  dateFrom: string | null;
  dateTo: string | null;
}

const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/**
 * Sums up the revisions change `batchId` wrote (`rel`, revisions.ts batchRevisionsSql: its own,
 * still uncommitted).
 */
export function* summarizeChange(
  tx: Tx,
  catalog: Catalog,
  d: Dataset,
  rel: Sql,
  batchId: string,
  change: { revert: boolean; pruned: number },
): Step<ChangeSummary> {
  const code = codeFieldOf(d);
  const codeCol = code ? sql`c.${ident(code.name)}` : null;
  const dateCol = d.range ? sql`c.${ident(d.range.name)}` : null;
  const op = sql`c.${ident(REV_OP)}`;
  const none = raw('NULL');
  const [s] = yield* tx.rows(
    sql`SELECT sum(CASE WHEN ${op} = 'insert' THEN 1 ELSE 0 END) AS ins,
        sum(CASE WHEN ${op} = 'update' THEN 1 ELSE 0 END) AS upd,
        sum(CASE WHEN ${op} = 'delete' THEN 1 ELSE 0 END) AS del,
        ${codeCol ? sql`count(DISTINCT ${codeCol})` : raw('0')} AS code_count,
        ${codeCol ? sql`min(${codeCol})` : none} AS code_from, ${codeCol ? sql`max(${codeCol})` : none} AS code_to,
        ${dateCol ? sql`min(${dateCol})` : none} AS date_from, ${dateCol ? sql`max(${dateCol})` : none} AS date_to
      FROM ${rel}`,
  );
  const codeCount = Number(s?.code_count ?? 0);
  let codes: string[] | null = null;
  if (codeCol && codeCount <= MAX_EVENT_CODES) {
    const rows = yield* tx.rows(sql`SELECT DISTINCT ${codeCol} AS code FROM ${rel} ORDER BY 1`);
    codes = rows.map((r) => String(r.code));
  }
  const [state] = yield* tx.rows(sql`SELECT version FROM mds_dataset_state WHERE dataset = ${d.name}`);
  return {
    dataset: d.name,
    kind: changeKind(catalog, d, change),
    batchId,
    version: Number(state?.version ?? 0),
    counts: { insert: Number(s?.ins ?? 0), update: Number(s?.upd ?? 0), delete: Number(s?.del ?? 0) },
    codeCount,
    codes,
    codeFrom: text(s?.code_from),
    codeTo: text(s?.code_to),
    dateFrom: text(s?.date_from),
    dateTo: text(s?.date_to),
  };
}

/** Records the event of a change known at `knownAt`, under the next id of the sequence (held to COMMIT). */
export function* appendChange(tx: Tx, c: ChangeSummary, knownAt: string): Step<number> {
  const [row] = yield* tx.rows(
    sql`INSERT INTO mds_feed (name, last_id, purged_through) VALUES (${FEED}, 1, 0)
      ON CONFLICT (name) DO UPDATE SET last_id = mds_feed.last_id + 1 RETURNING last_id`,
  );
  const id = Number(row?.last_id);
  yield* tx.run(
    sql`INSERT INTO mds_events (id, dataset, kind, batch_id, known_at, version, inserted, updated, deleted,
        code_count, codes, code_from, code_to, date_from, date_to)
      VALUES (${id}, ${c.dataset}, ${c.kind}, ${c.batchId}, ${knownAt}, ${c.version}, ${c.counts.insert},
        ${c.counts.update}, ${c.counts.delete}, ${c.codeCount}, ${c.codes ? JSON.stringify(c.codes) : null},
        ${c.codeFrom}, ${c.codeTo}, ${c.dateFrom}, ${c.dateTo})`,
  );
  return id;
}

function storedOf(r: DbRow): StoredChange {
  return {
    id: Number(r.id),
    dataset: String(r.dataset),
    kind: String(r.kind) as ChangeKind,
    batch_id: String(r.batch_id),
    known_at: String(r.known_at),
    version: Number(r.version),
    inserted: Number(r.inserted),
    updated: Number(r.updated),
    deleted: Number(r.deleted),
    code_count: Number(r.code_count),
    codes: typeof r.codes === 'string' ? (JSON.parse(r.codes) as string[]) : null,
    code_from: text(r.code_from),
    code_to: text(r.code_to),
    date_from: text(r.date_from),
    date_to: text(r.date_to),
  };
}

/** Events removed per statement by retention. */
const PURGE_STEP = 5000;

/** The feed's reads and its retention (on the primary: a replica may lag behind an id a client holds). */
export class SqlChangeStore implements ChangeStore {
  constructor(private readonly db: Db) {}

  private async position(): Promise<{ latest: number; purgedThrough: number }> {
    const [r] = await this.db.rows(sql`SELECT last_id, purged_through FROM mds_feed WHERE name = ${FEED}`, {
      prepared: true,
    });
    return { latest: Number(r?.last_id ?? 0), purgedThrough: Number(r?.purged_through ?? 0) };
  }

  async list(query: ChangeQuery): Promise<ChangePage> {
    // The latest id first, then the events up to it: every id up to the latest has committed
    // (appendChange), so the page misses none whatever commits meanwhile.
    const { latest } = await this.position();
    const where: Sql[] = [sql`id > ${query.after}`, sql`id <= ${latest}`];
    if (query.datasets) where.push(sql`dataset IN (${join(query.datasets.map((d) => sql`${d}`))})`);
    const rows =
      query.limit > 0 && latest > query.after
        ? await this.db.rows(
            sql`SELECT * FROM mds_events WHERE ${join(where, ' AND ')} ORDER BY id LIMIT ${query.limit}`,
          )
        : [];
    // Read after the events: retention that removed some of them meanwhile is seen.
    const { purgedThrough } = await this.position();
    const [oldest] = await this.db.rows(sql`SELECT min(id) AS id FROM mds_events`);
    return {
      events: rows.map(storedOf),
      latest,
      purgedThrough,
      oldest: oldest?.id === null || oldest?.id === undefined ? null : Number(oldest.id),
    };
  }

  async purge(before: string): Promise<number> {
    const [m] = await this.db.rows(sql`SELECT max(id) AS id FROM mds_events WHERE known_at < ${before}`);
    if (m?.id === null || m?.id === undefined) return 0;
    const through = Number(m.id);
    // Said before the events go: a reader that misses one of them then sees the bound (list).
    await this.db.run(
      sql`UPDATE mds_feed SET purged_through = ${through} WHERE name = ${FEED} AND purged_through < ${through}`,
    );
    let removed = 0;
    for (;;) {
      const n = await this.db.run(
        sql`DELETE FROM mds_events WHERE id IN (SELECT id FROM mds_events WHERE id <= ${through} ORDER BY id LIMIT ${PURGE_STEP})`,
      );
      removed += n;
      if (n < PURGE_STEP) break;
    }
    return removed;
  }
}
