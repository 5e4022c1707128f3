// Sandbox networking against a test-made world (host/world.mjs): the
// cases in world-cases.mjs run inside the world's "host" namespace, where
// the backend they start can reach nothing but the world. Needs root (CI is
// root): without it this test fails, it does not skip. Both namespaces and
// everything in them are removed whether the cases pass or not.
import assert from 'node:assert/strict'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import { makeWorld } from '../../host/world.mjs'

const here = path.dirname(fileURLToPath(import.meta.url))

test('sandbox networking in a world namespace (egress rules, DNS, what is never reachable, cleanup)', { timeout: 600000 }, async () => {
  const world = await makeWorld()
  try {
    const { code, out } = await world.runTests(path.join(here, 'world-cases.mjs'))
    process.stdout.write(out.replace(/^/gm, '  '))
    assert.equal(code, 0, 'world cases failed (their output is above)')
    assert.match(out, /^# fail 0$/m)
    assert.ok(Number(/^# pass (\d+)$/m.exec(out)?.[1]) >= 14, 'every world case ran')
  } finally {
    world.remove()
  }
})
