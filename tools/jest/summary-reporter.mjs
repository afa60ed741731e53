// Appends one line per Jest run ({passed, failed, skipped}) to GATEHOUSE_TEST_SUMMARY_FILE, so `npm test` can
// print one closing line for the whole Nx run. Does nothing when the variable is unset.
import { appendFileSync } from 'node:fs';

export default class SummaryReporter {
  onRunComplete(_contexts, results) {
    const file = process.env.GATEHOUSE_TEST_SUMMARY_FILE;
    if (!file) return;
    const line = {
      passed: results.numPassedTests,
      failed: results.numFailedTests + (results.numRuntimeErrorTestSuites ?? 0),
      skipped: results.numPendingTests + results.numTodoTests,
    };
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }
}
