import { cpuSeconds } from './proc.js';
import { minuteBodies, minuteInFlight, pushBodies } from './phases/minute.js';

/**
 * A market day of minute bars pushed to a service already running (to profile it, or to time
 * one build against another in the same minutes), as the bench's minute phase pushes it:
 *
 *   npx tsx bench/minute-push.ts <url> [codes=5000] [service pid: its CPU, all its processes]
 *   (BENCH_MINUTE_IN_FLIGHT: batches in flight, default 2 as `mds push`)
 */
const url = process.argv[2] ?? 'http://127.0.0.1:8080';
const codes = Number(process.argv[3] ?? 5000);
const pid = process.argv[4] ? Number(process.argv[4]) : null;
const bodies = minuteBodies(codes, '2024-03-01');
const cpu0 = pid ? cpuSeconds(pid) : 0;
const own = process.cpuUsage();
const seconds = await pushBodies(url, bodies, minuteInFlight());
const mine = process.cpuUsage(own);
const bars = codes * 240;
const cpu = pid ? cpuSeconds(pid) - cpu0 : NaN;
console.log(
  `${bars} bars in ${seconds.toFixed(2)} s (${(bars / seconds).toFixed(0)} bars/s), ${minuteInFlight()} in flight; ` +
    `service CPU ${cpu.toFixed(2)} s (${((cpu * 1e6) / bars).toFixed(2)} µs/bar); pusher CPU ${((mine.user + mine.system) / 1e6).toFixed(2)} s`,
);
