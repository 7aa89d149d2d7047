import { Type } from '@sinclair/typebox';
import { MAX_LISTED_DATES, PRE_CLOSE_TOLERANCE, QUALITY_SORTS } from '../model/quality-rules.js';
import { PageMetaSchema, nullable } from './envelope.js';

const DaySpanSchema = Type.Object({
  from: Type.String({ format: 'date' }),
  to: Type.String({ format: 'date' }),
});

/** A row of the data-quality report (GET /api/v1/quality/{dataset}): one per code. */
export const QualityRowSchema = Type.Object(
  {
    code: Type.String(),
    first_date: Type.String({ format: 'date', description: 'first bar in the window' }),
    last_date: Type.String({ format: 'date', description: 'last bar in the window' }),
    bars: Type.Integer({ description: 'distinct bar dates' }),
    expected: Type.Integer({ description: 'open days of the calendar from first_date to last_date' }),
    missing: Type.Integer({ description: 'open days in that span without a bar' }),
    missing_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `the first ${MAX_LISTED_DATES} missing days`,
    }),
    stale: Type.Boolean({
      description: "no bar on the calendar's latest open day up to today, while other codes have one",
    }),
    ohlc_violations: Type.Integer({
      description: 'bars with low > high, open or close outside [low, high], or a negative volume',
    }),
    ohlc_violation_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `their dates (the first ${MAX_LISTED_DATES})`,
    }),
    zero_volume_days: nullable(
      Type.Integer({ description: 'days with volume 0 (null: the dataset has no volume)' }),
    ),
    off_calendar_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `bar dates on days the calendar says are closed (the first ${MAX_LISTED_DATES})`,
    }),
    zero_volume_dates: Type.Array(Type.String({ format: 'date' }), {
      description: `bar dates with volume 0 (the first ${MAX_LISTED_DATES})`,
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
export const QualityAnswerSchema = Type.Object({
  code: Type.Integer({ description: '0 on success' }),
  message: Type.String(),
  data: Type.Array(QualityRowSchema),
  meta: Type.Composite([
    PageMetaSchema,
    Type.Object({
      exchange: Type.String({ description: 'the calendar the report judged by' }),
      calendar: nullable(
        Type.Object(DaySpanSchema.properties, {
          description:
            "the first and last day of the exchange's stored calendar: days outside it are not judged",
        }),
      ),
      jump_pct: Type.Number({ description: 'the move of a close, in %, beyond which a bar is a jump' }),
    }),
  ]),
});

export const QUALITY_SORT_ENUM = [...QUALITY_SORTS];
