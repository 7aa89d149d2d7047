/**
 * The shape of a dataset declaration: plain data, one per dataset, from which ingest
 * validation, storage tables and indexes, query endpoints, filters and OpenAPI follow.
 */

/** How a market writes its instrument codes (DatasetDeclaration.codes). */
export type CodeMarket = 'cn' | 'us';

export type FieldType = 'string' | 'number' | 'integer' | 'date' | 'timestamp' | 'flag';

/** Shorthand: `'number'` is optional, `'number!'` is required. */
export type FieldShorthand = FieldType | `${FieldType}!`;

export interface FieldDetail {
  readonly type: FieldType;
  readonly required?: boolean;
  /** Allowed values (strings or integers). */
  readonly enum?: readonly (string | number)[];
  /** Stored but left out of the row's JSON (a bar block's payload: catalog.ts `BarBlocks`). */
  readonly opaque?: boolean;
  /** Regular expression a string value must match (anchored by the author). */
  readonly pattern?: string;
  readonly description?: string;
  /** Numbers: every value must be greater than this (an adjustment factor is > 0). */
  readonly exclusiveMinimum?: number;
}

export type FieldSpec = FieldShorthand | FieldDetail;

export interface DatasetDeclaration {
  /** Dataset name = `meta.dataset` = `meta.table` = storage table. */
  readonly name: string;
  readonly layer: 'standardized' | 'features' | 'query' | 'us' | 'reference';
  readonly description: string;
  /** Query path under which rows are served. */
  readonly endpoint: string;
  /** Ingest field names in the order rows are returned. `created_at` is added by the server. */
  readonly fields: Readonly<Record<string, FieldSpec>>;
  /** Ingest name → row (API) name, for the standardized layer (`symbol` → `code`). */
  readonly rename?: Readonly<Record<string, string>>;
  /** Unique key, ingest names: the fields of `unique_key`. */
  readonly key: readonly string[];
  /** Ingest field that `business_date` selects for a full snapshot; null: one partition per source. */
  readonly partition: string | null;
  /** Row field that `date_from` / `date_to` apply to; null: no range filter. */
  readonly range: string | null;
  /** Default sort (row field) and order. */
  readonly sort: { readonly field: string; readonly order: 'asc' | 'desc' };
  /** Exact-match filters, row names. */
  readonly exact: readonly string[];
  /** `%value%` case-insensitive filters, row names. */
  readonly like?: readonly string[];
  /**
   * Exact filters (row names) that hold instrument codes, and the market whose spellings they
   * accept: `cn` codes are stored as 6 digits and also found as `510300.SH`, `sh510300`,
   * `SH510300`; `us` codes (tickers, CIKs, CUSIPs) are taken as written. Code filters take a
   * comma list (docs/endpoints.md#many-values-and-code-spellings).
   */
  readonly codes?: { readonly market: CodeMarket; readonly fields: readonly string[] };
  /** Units of numeric fields (ingest names) where the default by name (units.ts) is not theirs. */
  readonly units?: Readonly<Record<string, string>>;
  /**
   * The field that plays the role of `source` for full-snapshot partitions; defaults to
   * `source` when the dataset has one.
   */
  readonly sourceField?: string;
  /** A daily series keyed by code and date: the quality report, and `interval`/`adjust` when declared. */
  readonly daily?: DailyDeclaration;
  /** This dataset holds adjustment factors that a `daily.adjust` may name. */
  readonly factors?: FactorsDeclaration;
  /** This dataset is a trading calendar (the quality report's `exchange`). */
  readonly calendar?: CalendarDeclaration;
  /** Intraday bars, stored as one compressed block per code, trading date and source (docs/minute-bars.md). */
  readonly blocks?: BlocksDeclaration;
}

/** Intraday bars (catalog.ts `BarBlocks`): which fields play which role, and the sessions. */
export interface BlocksDeclaration {
  /** Ingest fields of the code, the trading date and the bar's end minute (a timestamp). */
  readonly code: string;
  readonly date: string;
  readonly time: string;
  readonly bar: {
    readonly open: string;
    readonly high: string;
    readonly low: string;
    readonly close: string;
    readonly volume: string;
    readonly amount: string;
  };
  /** The exchange's offset from UTC, as bar times are answered (`+08:00`). */
  readonly utcOffset: string;
  /** Trading sessions in exchange time, `HH:MM-HH:MM`; a bar is labelled by its end minute. */
  readonly sessions: readonly string[];
  /** `adjust=qfq|hfq` with a daily factor dataset: open, high, low and close multiplied by its factor. */
  readonly adjust?: { readonly factors: string };
  /**
   * The daily dataset of the same bars (keyed code, date, source): the quality report compares
   * each day's bars resampled to `1d` with its bar of the same source (docs/minute-bars.md).
   */
  readonly daily?: string;
}

/** How one field of a daily bar becomes the field of a week, month, quarter or year bar. */
export type Aggregation = 'first' | 'last' | 'max' | 'min' | 'sum';

export interface DailyDeclaration {
  /** Ingest fields of the instrument code and the bar's date. */
  readonly code: string;
  readonly date: string;
  /** The calendar (an `exchange` of the calendar dataset) the quality report judges by by default. */
  readonly calendar: string;
  /**
   * The bar's roles: OHLC and volume are checked for impossible bars (quality); close,
   * pre-close, change and percent change are recomputed under `adjust` and `interval`.
   */
  readonly bar?: {
    readonly open: string;
    readonly high: string;
    readonly low: string;
    readonly close: string;
    readonly preClose?: string;
    readonly change?: string;
    readonly pctChg?: string;
    readonly volume?: string;
    /**
     * A flag field, 1 on a day the code was suspended: the quality report lists such a day as
     * suspended, not as a zero-volume day nor as part of a run of identical bars.
     */
    readonly suspended?: string;
  };
  /**
   * `interval=1w|1M|1Q|1Y`: the aggregation of every row field except the key (code, date and
   * the rest of the key form the group) and the recomputed pre-close, change and percent change.
   * The close must be `last`.
   */
  readonly aggregate?: Readonly<Record<string, Aggregation>>;
  /** `adjust=qfq|hfq`: the factor dataset and the price fields multiplied by the factor. */
  readonly adjust?: { readonly factors: string; readonly prices: readonly string[] };
}

export interface FactorsDeclaration {
  /** Ingest fields: the code, the date from which the factor is in force, the factor. */
  readonly code: string;
  readonly date: string;
  readonly value: string;
}

export interface CalendarDeclaration {
  readonly exchange: string;
  readonly date: string;
  /** A flag: 1 on trading days. */
  readonly isOpen: string;
}
