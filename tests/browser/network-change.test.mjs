// A sandbox's create and delete are no network change to a browser on the
// same host (network-change-cases.mjs says how that is shown). Run inside a
// test world's host namespace, like tests/net: the backend there can reach
// nothing but the world, and the control address the case adds changes no
// namespace but that one. Needs root (CI is root): without it this test
// fails, it does not skip.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { makeWorld } from '../../host/world.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

test('sandboxes come and go without a network change for a browser beside the backend', { timeout: 180000 }, async () => {
  const world = await makeWorld()
  try {
    const { code, out } = await world.runTests(path.join(here, 'network-change-cases.mjs'))
    process.stdout.write(out.replace(/^/gm, '  '))
    assert.equal(code, 0, 'the case failed (its output is above)')
    assert.match(out, /^# pass 1$/m)
    assert.match(out, /^# fail 0$/m)
  } finally {
    world.remove()
  }
})
