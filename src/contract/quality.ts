import { Type, type TString } from '@sinclair/typebox';
import { MAX_LISTED_DATES, PRE_CLOSE_TOLERANCE, QUALITY_SORTS } from '../model/quality-rules.js';
import { envelopeSchema, nullable } from './envelope.js';

const DaySpanSchema = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
});

/** A report row's code and the dates it spans in the window (`what`: the first and last of what). */
function codeSpan(what: string): { code: TString; first_date: TString; last_date: TString } {
  return {
    code: Type.String(),
    first_date: Type.String({ format: 'date', description: `first ${what} in the window` }),
    last_date: Type.String({ format: 'date', description: `last ${what} in the window` }),
  };
}

/** A row of the data-quality report (GET /api/v1/quality/{dataset}): one per code. */
export const QualityRowSchema = Type.Object(
  {
    ...codeSpan('bar'),
    bars: Type.Integer({ description: 'distinct bar dates' }),
    expected: Type.Integer({ description: 'open days of the calendar from first_date to last_date' }),
    missing: Type.Integer({ description: 'open days in that span without a bar' }),
    missing_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `the first ${MAX_LISTED_DATES} missing days`,
    }),
    stale: Type.Boolean({
      description:
        "no bar on the calendar's latest open day up to today (or date_to), whatever the other codes' bars",
    }),
    ohlc_violations: Type.Integer({
      description: 'bars with low > high, open or close outside [low, high], or a negative volume',
    }),
    ohlc_violation_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `their dates (the first ${MAX_LISTED_DATES})`,
    }),
    zero_volume_days: nullable(
      Type.Integer({
        description: 'days with volume 0 that are not suspended days (null: the dataset has no volume)',
      }),
    ),
    off_calendar_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `bar dates on days the calendar says are closed (the first ${MAX_LISTED_DATES})`,
    }),
    zero_volume_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `bar dates with volume 0 that are not suspended days (the first ${MAX_LISTED_DATES})`,
    }),
    suspended_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `bar dates flagged suspended (stock_daily is_suspended = 1; the first ${MAX_LISTED_DATES}): neither zero-volume days nor identical runs`,
    }),
    jumps: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        pct: Type.Number({ description: "the close's move from the previous close, in %" }),
        source: Type.Optional(Type.String()),
      }),
      {
        description: `bars whose close moved more than meta.jump_pct % from the previous bar's close times the factor change between them (a move a factor change explains is none); the first ${MAX_LISTED_DATES}`,
      },
    ),
    identical_runs: Type.Array(
      Type.Object({
        from: Type.String({ format: 'date' }),
        to: Type.String({ format: 'date' }),
        bars: Type.Integer(),
        source: Type.Optional(Type.String()),
      }),
      {
        description: `runs of consecutive bars with the same open, high, low, close and volume (the first ${MAX_LISTED_DATES})`,
      },
    ),
    pre_close_mismatches: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date' }),
        pre_close: Type.Number(),
        expected: Type.Number({ description: 'the previous close times the factor change' }),
        source: Type.Optional(Type.String()),
      }),
      {
        description: `bars whose pushed pre_close differs by more than ${PRE_CLOSE_TOLERANCE} from the previous bar's close times the factor change (the first ${MAX_LISTED_DATES})`,
      },
    ),
    unjudged: Type.Array(DaySpanSchema, {
      description:
        'the parts of first_date … last_date outside the stored calendar (meta.calendar): their open days are unknown, so expected and missing do not count them',
    }),
  },
  { title: 'QualityRow' },
);

/** The report in the envelope; meta also names the calendar it was judged by. */
export const QualityAnswerSchema = envelopeSchema(
  QualityRowSchema,
  Type.Object({
    exchange: Type.String({ description: 'the calendar the report judged by' }),
    calendar: nullable(
      Type.Object(DaySpanSchema.properties, {
        description:
          "the first and last day of the exchange's stored calendar: days outside it are not judged",
      }),
    ),
    jump_pct: Type.Number({ description: 'the move of a close, in %, beyond which a bar is a jump' }),
    calendar_ends_before: Type.Optional(
      Type.Object(
        {
          calendar_to: Type.String({ format: 'date', description: "the stored calendar's last day" }),
          range_end: Type.String({ format: 'date', description: 'date_to, else today' }),
          message: Type.String(),
        },
        {
          description:
            'the stored calendar ends before the range asked for: days after its end are not judged (neither missing nor stale)',
        },
      ),
    ),
  }),
);

export const QUALITY_SORT_ENUM = [...QUALITY_SORTS];

const DateSource = {
  date: Type.String({ format: 'date' }),
  source: Type.String(),
};

/**
 * A row of a minute dataset's quality report (GET /api/v1/quality/stock_minute, …): one per code,
 * its days' bars resampled to 1d against the daily dataset of the same source, and the days'
 * own checks (docs/minute-bars.md "Quality report").
 */
export const MinuteQualityRowSchema = Type.Object(
  {
    ...codeSpan('trading date with bars'),
    days: Type.Integer({ description: 'distinct trading dates with bars (two sources of a day count once)' }),
    bars: Type.Integer({ description: 'minute bars, every source' }),
    compared_days: Type.Integer({
      description:
        'days (per source) whose 1d bar from the minutes was compared with a daily bar of the same source',
    }),
    mismatched_days: Type.Integer({
      description: 'of those, the days where a field differs beyond meta.tolerance',
    }),
    mismatches: Type.Array(
      Type.Object({
        ...DateSource,
        field: Type.String({ description: 'open, high, low, close, volume or amount' }),
        minutes: Type.Number({ description: "the 1d bar's value, from the minutes" }),
        daily: Type.Number({ description: "the daily dataset's value" }),
      }),
      {
        description: `the differing fields of those days, one item per field (the first ${MAX_LISTED_DATES})`,
      },
    ),
    no_daily: Type.Integer({
      description: 'days (per source) with minute bars but no daily bar of that source',
    }),
    no_daily_dates: Type.Array(Type.Object(DateSource), {
      description: `those days (the first ${MAX_LISTED_DATES})`,
    }),
    no_minutes: Type.Integer({
      description:
        "traded daily bars (volume not 0) of a source that has this code's minutes, inside that source's first … last minute date, without minute bars",
    }),
    no_minute_dates: Type.Array(Type.Object(DateSource), {
      description: `those days (the first ${MAX_LISTED_DATES})`,
    }),
    gap_days: Type.Integer({
      description:
        'days (per source) missing minutes inside a session that has bars (a half day or a session without any bar is no gap)',
    }),
    gaps: Type.Array(
      Type.Object({
        ...DateSource,
        bars: Type.Integer({ description: "the day's bars" }),
        expected: Type.Integer({ description: "the minutes of the day's sessions that have bars" }),
      }),
      { description: `those days (the first ${MAX_LISTED_DATES})` },
    ),
    ohlc_violations: Type.Integer({
      description: 'minute bars with low > high, open or close outside [low, high], or a negative volume',
    }),
    ohlc_violation_times: Type.Array(
      Type.Object({ time: Type.String({ format: 'date-time' }), source: Type.String() }),
      { description: `those bars' end minutes (the first ${MAX_LISTED_DATES})` },
    ),
  },
  { title: 'MinuteQualityRow' },
);

/** The minute report in the envelope; meta names the daily dataset and the tolerances it compared with. */
export const MinuteQualityAnswerSchema = envelopeSchema(
  MinuteQualityRowSchema,
  Type.Object({
    daily: nullable(Type.String({ description: 'the daily dataset the 1d bars are compared with' })),
    tolerance: Type.Object(
      {
        price: Type.Number({ description: 'open, high, low and close: largest difference taken as equal' }),
        volume: Type.Number({ description: 'volume: largest difference taken as equal' }),
        amount: Type.Number({ description: 'amount: largest difference taken as equal' }),
      },
      { description: 'a field differs when |minutes − daily| exceeds its tolerance' },
    ),
  }),
);
