import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * Python for the tests that read our answers with readers we did not write (pyarrow, DuckDB)
 * and for the Python client's own suite. `MDS_PYTHON` names the interpreter (CI: a venv with
 * the packages from the local mirror, see .ci/run); otherwise `python3`.
 */
export const PYTHON = process.env.MDS_PYTHON ?? 'python3';

const run = promisify(execFile);

function has(code: string): boolean {
  try {
    execFileSync(PYTHON, ['-c', code], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** True when the interpreter runs; a message on stderr says what is skipped otherwise. */
export function pythonAvailable(): boolean {
  const ok = has('import sys; assert sys.version_info >= (3, 9)');
  if (!ok) {
    if (process.env.MDS_REQUIRE_PYTHON === '1')
      throw new Error(`MDS_REQUIRE_PYTHON=1 but ${PYTHON} (≥ 3.9) does not run`);
    console.warn(`# ${PYTHON} (≥ 3.9) not found: the Python suites are SKIPPED`);
  }
  return ok;
}

/** True when the interpreter has `module`; otherwise warns what is skipped (or fails in CI). */
export function pythonHas(module: string, what: string): boolean {
  const ok = pythonAvailable() && has(`import ${module}`);
  if (!ok) {
    if (process.env.MDS_REQUIRE_PYARROW === '1')
      throw new Error(`MDS_REQUIRE_PYARROW=1 but ${PYTHON} cannot import ${module}`);
    console.warn(`# ${PYTHON} cannot import ${module}: ${what} SKIPPED (pip install ${module})`);
  }
  return ok;
}

export async function runPython(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return (await runPythonFull(args, opts)).stdout;
}

/** Both streams (unittest reports on stderr); rejects on a non-zero exit, with both attached. */
export async function runPythonFull(
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ stdout: string; stderr: string }> {
  return run(PYTHON, args, { maxBuffer: 256 * 1024 * 1024, ...opts });
}

/** True when the interpreter has the `mcp` package; otherwise warns what is skipped (or fails in CI). */
export function pythonHasMcp(): boolean {
  const ok = pythonAvailable() && has('import mcp');
  if (!ok) {
    if (process.env.MDS_REQUIRE_PYTHON_MCP === '1')
      throw new Error(`MDS_REQUIRE_PYTHON_MCP=1 but ${PYTHON} cannot import mcp`);
    console.warn(`# ${PYTHON} cannot import mcp: the Python MCP client test is SKIPPED (pip install mcp)`);
  }
  return ok;
}
