// host-assert.mjs — assertions on calls made through the reference host.
import assert from 'node:assert/strict'
import { HostError } from '../../host/reference/host.mjs'

/** Awaits a call that must fail with a HostError, runs check(err), returns err. */
export async function rejects(promise, check) {
  try {
    await promise
  } catch (err) {
    assert.ok(err instanceof HostError, `expected a HostError, got ${err}`)
    check(err)
    return err
  }
  assert.fail('expected the call to fail')
}
