import { BLOCK_BARS, BLOCK_COUNT, type Dataset } from '../catalog/catalog.js';
import { ident, join, raw, sql, type Sql } from './sql.js';
import type { MinuteQualityQuery } from './store.js';

/**
 * The minute quality report's one statement over the block table (query/minute-quality.ts): the
 * page's codes, each with the span, days, blocks and bars the report covers, the report's total
 * and the page's blocks, in ONE statement so that one snapshot answers all of them on both
 * backends (two statements let a batch landing between them mix one page: a code's span from
 * before it, its blocks from after).
 */

function blockTable(d: Dataset): Dataset {
  if (!d.blocks) throw new Error(`${d.name} is not stored as bar blocks`);
  return d.blocks.stored;
}

function conditions(mq: MinuteQualityQuery): Sql {
  const b = mq.dataset.blocks;
  if (!b) throw new Error(`${mq.dataset.name} is not stored as bar blocks`);
  const parts: Sql[] = [];
  if (mq.code !== null) parts.push(sql`${ident(b.code.name)} = ${mq.code}`);
  if (mq.source !== null) parts.push(sql`${ident(b.source.name)} = ${mq.source}`);
  if (mq.dateFrom !== null) parts.push(sql`${ident(b.date.name)} >= ${mq.dateFrom}`);
  if (mq.dateTo !== null) parts.push(sql`${ident(b.date.name)} <= ${mq.dateTo}`);
  return parts.length ? sql` WHERE ${join(parts, ' AND ')}` : raw('');
}

/**
 * One page of the report: a row per block of the page's codes in the window, ordered by code,
 * date and source, each carrying its code's span and the report's total (`total`). The blocks
 * come only when the page's codes hold at most `maxBlocks` (otherwise one row per code, its
 * block columns null: the caller names a smaller limit); past the last code, one row of the
 * total alone (its code null).
 */
export function minutePageSql(mq: MinuteQualityQuery, limit: number, offset: number, maxBlocks: number): Sql {
  const b = mq.dataset.blocks;
  if (!b) throw new Error(`${mq.dataset.name} is not stored as bar blocks`);
  const code = ident(b.code.name);
  const date = ident(b.date.name);
  const table = ident(blockTable(mq.dataset).name);
  const where = conditions(mq);
  const dir = raw(mq.order === 'desc' ? 'DESC' : 'ASC');
  return sql`WITH page AS (
      SELECT ${code} AS code, MIN(${date}) AS first_date, MAX(${date}) AS last_date,
        COUNT(DISTINCT ${date}) AS days, COUNT(*) AS blocks, SUM(${ident(BLOCK_COUNT)}) AS bars
      FROM ${table}${where}
      GROUP BY ${code} ORDER BY ${code} ${dir} LIMIT ${limit} OFFSET ${offset})
    SELECT n.total, p.code, p.first_date, p.last_date, p.days, p.blocks, p.bars,
      k.b_date, k.b_source, k.b_bars
    FROM (SELECT COUNT(DISTINCT ${code}) AS total FROM ${table}${where}) n
    LEFT JOIN page p ON 1 = 1
    LEFT JOIN (
      SELECT ${code} AS b_code, ${date} AS b_date, ${ident(b.source.name)} AS b_source,
        ${ident(BLOCK_BARS)} AS b_bars
      FROM ${table}${where}) k
      ON k.b_code = p.code AND (SELECT SUM(blocks) FROM page) <= ${maxBlocks}
    ORDER BY p.code ${dir}, k.b_date, k.b_source`;
}
