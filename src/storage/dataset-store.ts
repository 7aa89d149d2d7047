import { BLOCK_COUNT, storesBlocks, type Catalog } from '../catalog/catalog.js';
import { totalOfShortPage, type DbRow, type ReadDb, type ShortPage } from './db.js';
import { TOTAL_COLUMN, ident, join, q, raw, renderSelect, sql, type Sql } from './sql.js';
import { planCountSql, planSelectParts } from './bars-sql.js';
import {
  calendarExchangesSql,
  checkFactorsSql,
  latestOpenDaySql,
  qualityChecksSql,
  summaryPageSql,
  summaryStateSql,
  summaryTotalsSql,
} from './quality-sql.js';
import { minutePageSql } from './quality-minute-sql.js';
import { QUALITY_RULE, qualityVerdicts, verdictFromRow } from './quality-summary.js';
import { runAsync, wait } from './step.js';
import { KnownTimes } from './known-times.js';
import { toColumns, type ValueColumns } from '../model/value-columns.js';
import { boundedRead } from './bounded-read.js';
import {
  PRE_CLOSE_TOLERANCE,
  type CheckCandidate,
  type CodeVerdict,
  type FactorPoint,
} from '../model/quality-rules.js';
import type {
  MinuteBlock,
  MinuteCodeSpan,
  MinuteQualityQuery,
  QualityPage,
  QualityPageRequest,
  QualityQuery,
  DatasetCoverage,
  DatasetStore,
  QueryJsonResult,
  QueryResult,
} from './store.js';
import type { QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';

/**
 * The datasets' rows as read by queries: pages, totals, exports, versions, coverage. Every
 * statement over dataset rows goes through `reads`; the versions and known instants (key
 * lookups) through `db`.
 */
export class SqlDatasetStore implements DatasetStore {
  /** Stamps answered as knowledge instants (created_at, a revision's valid_from and valid_to). */
  private readonly known: KnownTimes;

  constructor(
    private readonly db: ReadDb,
    private readonly catalog: Catalog,
    /** Statements over dataset rows (SQLite: reader processes, sqlite/reader-pool.ts). */
    private readonly reads: ReadDb = db,
  ) {
    this.known = new KnownTimes(db);
  }

  async query(plan: QueryPlan, withTotal: boolean): Promise<QueryResult> {
    const { rows, total } = await this.page(plan, withTotal, false);
    await this.known.objects(plan.dataset.name, plan.select, rows);
    return { rows: rows as Record<string, Value>[], total };
  }

  async queryColumns(plan: QueryPlan): Promise<ValueColumns> {
    const s = renderSelect(planSelectParts(plan, this.reads.dialect, true, false));
    const chunk = this.reads.columns
      ? await this.reads.columns(s)
      : toColumns((await this.reads.arrays(s, { prepared: true })) as Value[][]);
    await this.known.columns(plan.dataset.name, plan.select, chunk);
    return chunk;
  }

  /** `query` for a plan selecting every row field, each row as its response JSON (plan.select ignored). */
  async queryJson(plan: QueryPlan, withTotal: boolean): Promise<QueryJsonResult> {
    const { rows, total } = await this.page(plan, withTotal, true);
    const json = rows.map((r) => (typeof r.j === 'string' ? r.j : null));
    return { rows: await this.known.json(plan.dataset.name, json), total };
  }

  /**
   * A page and, when wanted, its total (-1 when not). A bounded page (bounded-read.ts), with its
   * count when it must be counted and is bounded too, is read on `db` (SQLite: the request
   * thread's connection): a reader's round trip costs more than the statement. Any other on `reads`.
   */
  private async page(
    plan: QueryPlan,
    withTotal: boolean,
    json: boolean,
  ): Promise<{ rows: DbRow[]; total: number }> {
    const bounded = this.reads === this.db ? null : boundedRead(plan);
    const reads = bounded?.page && (!withTotal || bounded.count) ? this.db : this.reads;
    const dialect = reads.dialect;
    const parts = planSelectParts(plan, dialect, true, json);
    if (withTotal && dialect.pageWithTotal) {
      const rows = await reads.rows(dialect.pageWithTotal(parts, planCountSql(plan, dialect)), {
        prepared: true,
      });
      const first = rows[0];
      // Past the last row: the page is empty, so only the total is left to read.
      if (!first) return { rows, total: await this.count(reads, plan) };
      const total = Number(first[TOTAL_COLUMN]);
      for (const r of rows) delete r[TOTAL_COLUMN];
      return { rows, total };
    }
    const short: ShortPage = plan.after === undefined ? { limit: plan.limit, offset: plan.offset } : null;
    if (withTotal && reads.pageAndCount) {
      return reads.pageAndCount(renderSelect(parts), planCountSql(plan, dialect), short);
    }
    const rows = await reads.rows(renderSelect(parts), { prepared: true });
    if (!withTotal) return { rows, total: -1 };
    // A short offset page ends the result: its total is known without counting.
    return { rows, total: totalOfShortPage(rows.length, short) ?? (await this.count(reads, plan)) };
  }

  private async count(reads: ReadDb, plan: QueryPlan): Promise<number> {
    const [n] = await reads.values(planCountSql(plan, reads.dialect), { prepared: true });
    return Number(n ?? 0);
  }

  /** A number that changes whenever a batch changes the dataset's rows (ETag, caches). */
  async datasetVersion(dataset: string): Promise<number> {
    const [v] = await this.db.values(sql`SELECT version FROM mds_dataset_state WHERE dataset = ${dataset}`, {
      prepared: true,
    });
    return v === undefined ? 0 : Number(v);
  }

  /** The version and the processed_at of the dataset's last change (null: never changed). */
  async datasetState(dataset: string): Promise<{ version: number; changedAt: string | null }> {
    const [r] = await this.db.rows(
      sql`SELECT version, last_batch_at FROM mds_dataset_state WHERE dataset = ${dataset}`,
      { prepared: true },
    );
    return { version: r ? Number(r.version) : 0, changedAt: (r?.last_batch_at as string | null) ?? null };
  }

  async firstChange(dataset: string): Promise<string | null> {
    // known_at '' is the empty marker before a dataset's first recorded change (revisions.ts).
    const [v] = await this.db.values(
      sql`SELECT min(known_at) FROM mds_changes WHERE dataset = ${dataset} AND known_at > ''`,
      { prepared: true },
    );
    return typeof v === 'string' ? v : null;
  }

  async sourceValues(dataset: string): Promise<string[]> {
    const d = this.catalog.byName.get(dataset);
    const f = d?.sourceField;
    if (!d || !f) return [];
    // A loose index scan (every source field is an exact filter, so an index leads with it):
    // one index probe per distinct value, not a scan of the rows.
    const c = ident(f.name);
    const t = ident(d.name);
    const values = await this.db.values(
      sql`WITH RECURSIVE s(v) AS (SELECT min(${c}) FROM ${t} UNION ALL
        SELECT (SELECT min(${c}) FROM ${t} WHERE ${c} > s.v) FROM s WHERE s.v IS NOT NULL)
        SELECT v FROM s WHERE v IS NOT NULL`,
    );
    return values.map(String);
  }

  async coverage(): Promise<DatasetCoverage[]> {
    // One statement (one snapshot) for every dataset.
    const parts = this.catalog.datasets.map((d, i) => {
      const dateField = d.range ?? d.partition;
      const agg = dateField
        ? raw(`min(${q(dateField.name)}) AS first, max(${q(dateField.name)}) AS last`)
        : raw('CAST(NULL AS TEXT) AS first, CAST(NULL AS TEXT) AS last');
      // A block table's rows are bars to every reader (API, MCP, dashboard): count its bars.
      const n = storesBlocks(d) ? raw(`coalesce(sum(${q(BLOCK_COUNT)}), 0)`) : raw('count(*)');
      return sql`SELECT ${raw(String(i))} AS i, ${n} AS n, ${agg} FROM ${ident(d.name)}`;
    });
    const aggs = await this.reads.rows(join(parts, ' UNION ALL '));
    const states = await this.reads.rows(
      sql`SELECT dataset, last_batch_id, last_batch_at FROM mds_dataset_state`,
    );
    const stateOf = new Map(states.map((s) => [String(s.dataset), s]));
    const byIndex = new Map(aggs.map((a) => [Number(a.i), a]));
    return this.catalog.datasets.map((d, i) => {
      const a = byIndex.get(i);
      const s = stateOf.get(d.name);
      return {
        dataset: d.name,
        rows: Number(a?.n ?? 0),
        first_date: (a?.first as string | null | undefined) ?? null,
        last_date: (a?.last as string | null | undefined) ?? null,
        last_batch_id: (s?.last_batch_id as string | null | undefined) ?? null,
        last_batch_at: (s?.last_batch_at as string | null | undefined) ?? null,
      };
    });
  }

  async minuteQualityPage(
    mq: MinuteQualityQuery,
    limit: number,
    offset: number,
    maxBlocks: number,
  ): Promise<{ rows: MinuteCodeSpan[]; total: number; blocks: MinuteBlock[] | null }> {
    const rows = await this.reads.rows(minutePageSql(mq, limit, offset, maxBlocks));
    const spans: MinuteCodeSpan[] = [];
    const blocks: MinuteBlock[] = [];
    let fits = true;
    for (const r of rows) {
      if (r.code === null || r.code === undefined) continue;
      const code = String(r.code);
      if (spans[spans.length - 1]?.code !== code)
        spans.push({
          code,
          first_date: String(r.first_date),
          last_date: String(r.last_date),
          days: Number(r.days),
          blocks: Number(r.blocks),
          bars: Number(r.bars),
        });
      if (r.b_bars === null || r.b_bars === undefined) fits = false;
      else blocks.push({ code, date: String(r.b_date), source: String(r.b_source), bars: String(r.b_bars) });
    }
    return { rows: spans, total: Number(rows[0]?.total ?? 0), blocks: fits ? blocks : null };
  }

  async qualityCalendar(
    qq: QualityQuery,
    until: string,
  ): Promise<{ exchanges: string[]; latest: string | null }> {
    const exchanges = (await this.reads.values(calendarExchangesSql(qq.calendar))).map(String);
    if (!exchanges.includes(qq.exchange)) return { exchanges, latest: null };
    const [latest] = await this.reads.values(latestOpenDaySql(qq, until));
    return { exchanges, latest: latest === null || latest === undefined ? null : String(latest) };
  }

  async qualityCodes(qq: QualityQuery): Promise<CodeVerdict[]> {
    // Read outside a transaction (SQLite: no write lock held while it runs).
    const reader = { rows: (s: Sql) => wait(this.reads.rows(s)) };
    return (await runAsync(qualityVerdicts(reader, qq, null))).map((k) => k.verdict);
  }

  async qualityChecks(
    qq: QualityQuery,
    codes: readonly string[],
    jumpPct: number,
  ): Promise<{ candidates: CheckCandidate[]; factors: FactorPoint[] }> {
    const name = qq.dataset.daily?.adjust?.factors;
    const factorSet = name === undefined ? null : (this.catalog.byName.get(name) ?? null);
    const checks = qualityChecksSql(qq, codes, factorSet, jumpPct, PRE_CLOSE_TOLERANCE);
    const factorsSql = factorSet ? checkFactorsSql(factorSet, codes) : null;
    const [rows, points] = await Promise.all([
      checks ? this.reads.rows(checks) : [],
      factorsSql ? this.reads.rows(factorsSql) : [],
    ]);
    const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
    const text = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
    return {
      candidates: rows.map((r) => ({
        code: String(r.code),
        source: text(r.source),
        date: String(r.date),
        prevDate: text(r.p_date),
        close: Number(r.close),
        prevClose: num(r.p_close),
        preClose: num(r.pre_close),
        offCalendar: Number(r.off) === 1,
        suspended: Number(r.susp) === 1,
        zeroVolume: Number(r.zero) === 1,
        samePrevious: Number(r.same) === 1,
      })),
      factors: points.map((r) => ({
        code: String(r.code),
        source: text(r.source),
        date: String(r.date),
        value: Number(r.value),
      })),
    };
  }

  async qualitySummaryPage(
    qq: QualityQuery,
    latest: string | null,
    page: QualityPageRequest,
  ): Promise<QualityPage | null> {
    if (qq.dateFrom !== null || qq.dateTo !== null) return null;
    const [state] = await this.reads.rows(summaryStateSql(qq.dataset));
    if (!state || state.exchange !== qq.exchange || Number(state.rule) !== QUALITY_RULE) return null;
    const [totals] = await this.reads.rows(summaryTotalsSql(qq));
    // The summaries' SQL judges staleness as isStale (model/quality-rules.ts) does.
    const rows = await this.reads.rows(summaryPageSql(qq, latest, page));
    return {
      total: Number(totals?.n ?? 0),
      rows: rows.map((r) => ({ ...verdictFromRow(r), stale: Number(r.stale) === 1 })),
    };
  }
}
