// Preloaded into the process whose call is walked (see call-walk.ts): each SIGWINCH enters a function never entered
// before, so V8's function log marks the moment — the first mark where the call starts, the second where it ended.
/* global process */
'use strict';
const marks = [function walkStart() {}, function walkEnd() {}];
let next = 0;
process.on('SIGWINCH', () => {
  const mark = marks[next++];
  if (mark) mark();
});
