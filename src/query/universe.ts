import type { Catalog, Dataset, Field } from '../catalog/catalog.js';
import type { Condition, QueryPlan } from '../model/query-plan.js';
import type { Value } from '../model/values.js';
import type { Store } from '../storage/store.js';
import { invalid } from '../errors.js';
import { isCalendarDate } from '../model/days.js';
import { normalizeCode } from './codes.js';
import type { QueryService } from './query-service.js';

/**
 * Who was there on a day (docs/universes.md): the codes listed on D (and members of an index
 * on D), each with the name it had on D, whether it was ST on D, its listing dates and its index
 * weight, read from the security master (stock_basic, stock_names, index_members) and
 * index_constituents. Every read is a plan over the catalog's datasets (no SQL here), run by the
 * store like any other (SQLite: in a reader process); the joining is per code, in the process,
 * over at most one day's listed codes.
 */

export interface UniverseQuery {
  date: string;
  index: string | null;
  exchange: string | null;
  board: string | null;
  listStatus: string | null;
  includeSt: boolean;
  asOf: string | null;
}

export interface UniverseRow {
  code: string;
  name: string | null;
  exchange: string | null;
  board: string | null;
  list_date: string | null;
  delist_date: string | null;
  list_status: string | null;
  is_st: boolean | null;
  index_code: string | null;
  in_date: string | null;
  weight: number | null;
}

/** How membership of `index` was judged: intervals, the last snapshot on or before D, or not at all. */
export type Membership = 'members' | 'snapshots' | 'none';

export interface UniverseMeta {
  date: string;
  index: string | null;
  membership: Membership | null;
  /** The index_constituents snapshot the weights (and, for `snapshots`, the membership) come from. */
  snapshot_date: string | null;
  calendar: 'open' | 'closed' | 'outside';
  /** Members without a stock_basic row: in `data` with null listing fields (left out when a listing filter applies). */
  no_basic: string[];
  /** Codes with no stock_names span covering D: their stock_basic name, is_st null. */
  no_name: string[];
  /** Members absent from the weight snapshot (weight null). */
  no_weight: string[];
  /** What could not be judged, in words (empty: everything was). */
  warnings: string[];
}

export interface UniverseAnswer {
  rows: UniverseRow[];
  meta: UniverseMeta;
}

/** A name beginning ST or *ST marks its span ST (the exchanges' risk warning). */
export const isStName = (name: string): boolean => /^\*?ST/i.test(name);

/** The exchanges whose calendars say whether an A-share day was open. */
const A_SHARE_CALENDARS = ['SSE', 'SZSE', 'BSE'];
/** Reads of whole sets (a day's listings, an index's intervals): far above any real count. */
const ALL = 1_000_000;

type Row = Record<string, Value>;
const str = (v: Value | undefined): string | null => (typeof v === 'string' ? v : null);

/** Listed on D: from its list_date up to the day before its delist_date. */
function listedOn(b: Row, date: string): boolean {
  const listed = str(b.list_date);
  const delisted = str(b.delist_date);
  return listed !== null && listed <= date && (delisted === null || date < delisted);
}

export class UniverseService {
  private readonly basic: Dataset;
  private readonly names: Dataset;
  private readonly members: Dataset;
  private readonly snapshots: Dataset;
  private readonly calendar: Dataset;

  constructor(
    catalog: Catalog,
    private readonly store: Store,
    private readonly query: QueryService,
  ) {
    const need = (name: string): Dataset => {
      const d = catalog.byName.get(name);
      if (!d) throw new Error(`the universe needs the ${name} dataset`);
      return d;
    };
    this.basic = need('stock_basic');
    this.names = need('stock_names');
    this.members = need('index_members');
    this.snapshots = need('index_constituents');
    this.calendar = need('trade_calendar');
  }

  /** The query parameters as values; 4001 on a code that is not one, 4005 on an as_of too old. */
  read(raw: {
    date: string;
    index?: string;
    exchange?: string;
    board?: string;
    list_status?: string;
    include_st?: boolean;
    as_of?: string;
  }): UniverseQuery {
    if (!isCalendarDate(raw.date))
      throw invalid(`date must be a calendar date YYYY-MM-DD (got "${raw.date}")`, { parameter: 'date' });
    let index: string | null = null;
    if (raw.index !== undefined) {
      index = normalizeCode('cn', raw.index);
      if (!/^\d{6}$/.test(index))
        throw invalid(`index must be an index code such as 000300 or 000300.SH (got "${raw.index}")`, {
          parameter: 'index',
        });
    }
    // as_of is read and checked against the horizon as every dataset endpoint does.
    const asOf =
      raw.as_of === undefined ? null : this.query.parse(this.basic, { as_of: raw.as_of }).plan.asOf;
    return {
      date: raw.date,
      index,
      exchange: raw.exchange ?? null,
      board: raw.board ?? null,
      listStatus: raw.list_status ?? null,
      includeSt: raw.include_st ?? true,
      asOf: asOf ?? null,
    };
  }

  async universe(q: UniverseQuery): Promise<UniverseAnswer> {
    const warnings: string[] = [];
    const [calendar, membership, weights] = await Promise.all([
      this.calendarOn(q),
      q.index === null ? Promise.resolve(null) : this.membersOn(q, q.index),
      q.index === null ? Promise.resolve(null) : this.lastSnapshot(q, q.index),
    ]);
    if (calendar === 'outside')
      warnings.push(
        `${q.date} is outside the stored trading calendar: whether it was a trading day is unknown`,
      );
    else if (calendar === 'closed') warnings.push(`${q.date} was not a trading day`);

    let memberOf: Map<string, string | null> | null = null;
    let kind: Membership | null = null;
    if (q.index !== null && membership !== null) {
      kind = membership.kind;
      if (membership.kind === 'members') memberOf = membership.codes;
      else if (membership.kind === 'snapshots') {
        // No intervals for this index: its members on D are its last snapshot's codes.
        memberOf = new Map([...(weights?.weights.keys() ?? [])].map((c) => [c, null]));
        if (weights === null)
          warnings.push(
            `index ${q.index} has no membership intervals and no constituents snapshot on or before ${q.date}`,
          );
      } else {
        memberOf = new Map();
        warnings.push(`index ${q.index} has neither membership intervals nor constituents snapshots`);
      }
    }
    if (q.index !== null && weights === null && kind === 'members')
      warnings.push(`index ${q.index} has no constituents snapshot on or before ${q.date}: weights are null`);

    const codes = memberOf === null ? null : [...memberOf.keys()];
    const [basic, names] = await Promise.all([this.basicOf(q, codes), this.namesOn(q, codes)]);

    const filtered = q.exchange !== null || q.board !== null || q.listStatus !== null;
    const noBasic: string[] = [];
    const noName: string[] = [];
    const noWeight: string[] = [];
    const rows: UniverseRow[] = [];
    for (const code of [...(codes ?? basic.keys())].sort()) {
      const b = basic.get(code) ?? null;
      if (b === null) {
        // A member the security master does not know: kept, since nothing says it was not there.
        noBasic.push(code);
        if (filtered) continue;
      } else if (!listedOn(b, q.date)) continue;
      if (b !== null && !this.passes(b, q)) continue;
      const name = names.get(code) ?? null;
      if (name === null) noName.push(code);
      const st = name === null ? null : isStName(name);
      if (!q.includeSt && st === true) continue;
      const weight = weights?.weights.get(code) ?? null;
      if (q.index !== null && weights !== null && weight === null) noWeight.push(code);
      rows.push({
        code,
        name: name ?? str(b?.name),
        exchange: str(b?.exchange),
        board: str(b?.board),
        list_date: str(b?.list_date),
        delist_date: str(b?.delist_date),
        list_status: str(b?.list_status),
        is_st: st,
        index_code: q.index,
        in_date: memberOf?.get(code) ?? null,
        weight,
      });
    }
    if (noBasic.length > 0)
      warnings.push(
        `${noBasic.length} member(s) have no stock_basic row: listing fields are null (no_basic)`,
      );
    if (noName.length > 0)
      warnings.push(`${noName.length} code(s) have no stock_names span covering ${q.date} (no_name)`);
    if (noWeight.length > 0)
      warnings.push(`${noWeight.length} member(s) are absent from the ${weights?.date} snapshot (no_weight)`);
    return {
      rows,
      meta: {
        date: q.date,
        index: q.index,
        membership: kind,
        snapshot_date: weights?.date ?? null,
        calendar,
        no_basic: noBasic,
        no_name: noName,
        no_weight: noWeight,
        warnings,
      },
    };
  }

  private passes(b: Row, q: UniverseQuery): boolean {
    if (q.exchange !== null && b.exchange !== q.exchange) return false;
    if (q.board !== null && b.board !== q.board) return false;
    return q.listStatus === null || b.list_status === q.listStatus;
  }

  /** A plan over `d` with these conditions, reading `select` (api names), under the request's as_of. */
  private plan(
    d: Dataset,
    select: readonly string[],
    where: readonly Condition[],
    q: UniverseQuery,
    order: { field: string; dir: 'asc' | 'desc' } | null = null,
    limit = ALL,
  ): QueryPlan {
    const first = order ? [{ field: this.field(d, order.field), dir: order.dir }] : [];
    // Then the key: one order, whatever the backend.
    const rest = d.key.filter((k) => k !== first[0]?.field).map((k) => ({ field: k, dir: 'asc' as const }));
    return {
      dataset: d,
      select: select.map((n) => this.field(d, n)),
      where,
      orderBy: [...first, ...rest],
      limit,
      offset: 0,
      ...(q.asOf !== null ? { asOf: q.asOf } : {}),
    };
  }

  private field(d: Dataset, apiName: string): Field {
    const x = d.fieldByApiName.get(apiName);
    if (!x) throw new Error(`${d.name} has no field ${apiName}`);
    return x;
  }

  private async rows(plan: QueryPlan): Promise<Row[]> {
    return (await this.store.datasets.query(plan, false)).rows;
  }

  /** Whether D is in the stored A-share calendars, and open in any of them. */
  private async calendarOn(q: UniverseQuery): Promise<UniverseMeta['calendar']> {
    const c = this.calendar;
    const rows = await this.rows(
      this.plan(
        c,
        ['is_open'],
        [
          { field: this.field(c, 'date'), op: 'eq', value: q.date },
          { field: this.field(c, 'exchange'), op: 'in', values: A_SHARE_CALENDARS },
        ],
        q,
      ),
    );
    if (rows.length === 0) return 'outside';
    return rows.some((r) => r.is_open === 1) ? 'open' : 'closed';
  }

  /** The index's members on D from its intervals (code → in_date), or which fallback applies. */
  private async membersOn(
    q: UniverseQuery,
    index: string,
  ): Promise<{ kind: 'members'; codes: Map<string, string | null> } | { kind: 'snapshots' | 'none' }> {
    const m = this.members;
    const ix: Condition = { field: this.field(m, 'index_code'), op: 'eq', value: index };
    const spans = await this.rows(
      this.plan(
        m,
        ['stock_code', 'in_date', 'out_date'],
        [ix, { field: this.field(m, 'in_date'), op: 'lte', value: q.date }],
        q,
      ),
    );
    if (spans.length === 0) {
      const any = await this.rows(this.plan(m, ['stock_code'], [ix], q, null, 1));
      if (any.length > 0) return { kind: 'members', codes: new Map() };
      const snap = await this.rows(
        this.plan(
          this.snapshots,
          ['stock_code'],
          [{ field: this.field(this.snapshots, 'index_code'), op: 'eq', value: index }],
          q,
          null,
          1,
        ),
      );
      return { kind: snap.length > 0 ? 'snapshots' : 'none' };
    }
    const codes = new Map<string, string | null>();
    for (const r of spans) {
      const out = str(r.out_date);
      if (out !== null && out < q.date) continue;
      const code = str(r.stock_code) as string;
      const inDate = str(r.in_date);
      const seen = codes.get(code);
      // Overlapping intervals (two sources): the latest entry on or before D.
      if (seen === undefined || (inDate !== null && seen !== null && inDate > seen)) codes.set(code, inDate);
    }
    return { kind: 'members', codes };
  }

  /** The index's last constituents snapshot on or before D: its date and weights. */
  private async lastSnapshot(
    q: UniverseQuery,
    index: string,
  ): Promise<{ date: string; weights: Map<string, number | null> } | null> {
    const s = this.snapshots;
    const ix: Condition = { field: this.field(s, 'index_code'), op: 'eq', value: index };
    const last = await this.rows(
      this.plan(
        s,
        ['trade_date'],
        [ix, { field: this.field(s, 'trade_date'), op: 'lte', value: q.date }],
        q,
        { field: 'trade_date', dir: 'desc' },
        1,
      ),
    );
    const date = str(last[0]?.trade_date);
    if (date === null) return null;
    const rows = await this.rows(
      this.plan(
        s,
        ['stock_code', 'weight', 'source'],
        [ix, { field: this.field(s, 'trade_date'), op: 'eq', value: date }],
        q,
        { field: 'source', dir: 'asc' },
      ),
    );
    const weights = new Map<string, number | null>();
    for (const r of rows) {
      const code = str(r.stock_code) as string;
      // Several sources: the first in alphabetical order (the plan's order).
      if (!weights.has(code)) weights.set(code, typeof r.weight === 'number' ? r.weight : null);
    }
    return { date, weights };
  }

  /** stock_basic rows, one per code: of `codes`, or of every code listed on or before D. */
  private async basicOf(q: UniverseQuery, codes: readonly string[] | null): Promise<Map<string, Row>> {
    const b = this.basic;
    if (codes !== null && codes.length === 0) return new Map();
    const where: Condition[] =
      codes === null
        ? [{ field: this.field(b, 'list_date'), op: 'lte', value: q.date }]
        : [{ field: this.field(b, 'code'), op: 'in', values: codes }];
    const rows = await this.rows(
      this.plan(
        b,
        ['code', 'name', 'exchange', 'board', 'list_date', 'delist_date', 'list_status', 'source'],
        where,
        q,
        { field: 'code', dir: 'asc' },
      ),
    );
    const out = new Map<string, Row>();
    for (const r of rows) {
      const code = str(r.code) as string;
      // Several sources: the first in alphabetical order (the plan's order).
      if (!out.has(code)) out.set(code, r);
    }
    return out;
  }

  /** Each code's name on D: its stock_names span with the latest start on or before D that has not ended. */
  private async namesOn(q: UniverseQuery, codes: readonly string[] | null): Promise<Map<string, string>> {
    const n = this.names;
    if (codes !== null && codes.length === 0) return new Map();
    const where: Condition[] = [{ field: this.field(n, 'start_date'), op: 'lte', value: q.date }];
    if (codes !== null) where.push({ field: this.field(n, 'code'), op: 'in', values: codes });
    const rows = await this.rows(
      this.plan(n, ['code', 'name', 'start_date', 'end_date'], where, q, {
        field: 'start_date',
        dir: 'desc',
      }),
    );
    const out = new Map<string, string>();
    const decided = new Set<string>();
    for (const r of rows) {
      const code = str(r.code) as string;
      if (decided.has(code)) continue;
      decided.add(code);
      const end = str(r.end_date);
      if (end === null || end >= q.date) out.set(code, str(r.name) as string);
    }
    return out;
  }
}
