/** Prints a command's result: as JSON (`--json`, or for scripts), else as the text a person reads. */
export function print(json: boolean | undefined, value: unknown, human: () => string): void {
  process.stdout.write(`${json ? JSON.stringify(value, null, 2) : human()}\n`);
}
