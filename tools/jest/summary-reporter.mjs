// Appends to GATEHOUSE_TEST_SUMMARY_FILE (JSON lines), so `npm test` can print one closing summary for the whole Nx
// run: one `file` line per test file (project, path, start and end in ms since the epoch, test counts) and one `run`
// line per Jest run (its directory, start and end, {passed, failed, skipped}). Does nothing when the variable is unset.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const workspace = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export default class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig?.rootDir ?? process.cwd();
    this.started = Date.now();
  }

  onRunStart() {
    this.started = Date.now();
  }

  onTestResult(test, result) {
    const file = process.env.GATEHOUSE_TEST_SUMMARY_FILE;
    if (!file) return;
    const project = test.context?.config?.displayName?.name ?? test.context?.config?.displayName ?? '';
    const line = {
      type: 'file',
      project: typeof project === 'string' ? project : '',
      path: path.relative(workspace, result.testFilePath),
      start: result.perfStats?.start,
      end: result.perfStats?.end,
      passed: result.numPassingTests,
      failed: result.numFailingTests + (result.testExecError ? 1 : 0),
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }

  onRunComplete(_contexts, results) {
    const file = process.env.GATEHOUSE_TEST_SUMMARY_FILE;
    if (!file) return;
    const line = {
      type: 'run',
      dir: path.relative(workspace, this.rootDir),
      start: this.started,
      end: Date.now(),
      passed: results.numPassedTests,
      failed: results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0),
      skipped: results.numPendingTests + results.numTodoTests,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }
}
