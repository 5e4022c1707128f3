// wait.mjs — polling for a condition in tests (never a timing assertion:
// the bound only stops a broken run from hanging).
import assert from 'node:assert/strict'

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Calls check() until it returns something truthy, which is returned;
 *  fails the test with `what` (or what(), for the state at the end) after
 *  overallMs. */
export async function until(check, what, overallMs = 20000, intervalMs = 20) {
  const deadline = Date.now() + overallMs
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${typeof what === 'function' ? what() : what}`)
    await sleep(intervalMs)
  }
}
