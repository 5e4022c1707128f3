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

// Runs a file of cases in the host namespace of a world of its own.
async function inWorld(file, minPassed) {
  const world = await makeWorld()
  try {
    const { code, out } = await world.runTests(path.join(here, file))
    process.stdout.write(out.replace(/^/gm, '  '))
    assert.equal(code, 0, `${file} failed (its output is above)`)
    assert.match(out, /^# fail 0$/m)
    assert.ok(Number(/^# pass (\d+)$/m.exec(out)?.[1]) >= minPassed, `every case of ${file} ran`)
  } finally {
    world.remove()
  }
}

test('sandbox networking in a world namespace (egress rules, DNS, what is never reachable, cleanup)', { timeout: 600000 },
  () => inWorld('world-cases.mjs', 14))

test('transform rules and the egress proxy in a world namespace (HTTPS with a CA of its own)', { timeout: 600000 },
  () => inWorld('egress-cases.mjs', 9))
