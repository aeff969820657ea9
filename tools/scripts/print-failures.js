// Prints, for each failed test (or suite that did not run) in jest --json result files, the first lines of its
// failure messages without colour codes — `npm test` puts them at the end of its output, where a CI log's tail shows.
const { readFileSync } = require('node:fs');

const LINES_PER_FAILURE = 25;
const plain = (text) => text.replace(/\u001b\[[0-9;]*m/g, '');
const head = (text) => plain(text).split('\n').slice(0, LINES_PER_FAILURE).map((l) => `    ${l}`).join('\n');

for (const file of process.argv.slice(2)) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  for (const suite of report.testResults) {
    if (suite.status === 'failed' && suite.message && !suite.assertionResults.some((t) => t.status === 'failed')) {
      console.log(`  ${suite.name}\n${head(suite.message)}`);
    }
    for (const test of suite.assertionResults.filter((t) => t.status === 'failed')) {
      console.log(`  ${suite.name} › ${test.fullName}`);
      for (const message of test.failureMessages) console.log(head(message));
    }
  }
}
