// The JavaScript copies of core/include/e2bw.h's enums (js-shim/core-module.mjs:
// ACTION, NET, DETACHED) must say what the C says: this reads every enum of the
// public header and compares it, member by member, with the copy of the same
// prefix (E2BW_NET_* ↔ NET). An enum added to e2bw.h without a copy fails too.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { test } from 'node:test'
import { fileURLToPath } from 'node:url'

import * as coreModule from '../../js-shim/core-module.mjs'

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

// { NET: { REFUSED: 1, ... }, ... } from `typedef enum e2bw_x { E2BW_NET_REFUSED = 1, ... } e2bw_x;`
function headerEnums(text) {
  const out = {}
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '')
  for (const [, body] of code.matchAll(/typedef\s+enum\s+\w+\s*\{([^}]*)\}\s*\w+\s*;/g)) {
    const members = [...body.matchAll(/\bE2BW_([A-Z]+)_(\w+)\s*=\s*(\d+)/g)]
    assert.ok(members.length > 0, `an enum of e2bw.h without explicit values: ${body.trim().slice(0, 60)}`)
    const group = members[0][1]
    out[group] = Object.fromEntries(members.map(([, g, name, value]) => {
      assert.equal(g, group, `E2BW_${g}_${name} in the enum of E2BW_${group}_*`)
      return [name, Number(value)]
    }))
  }
  return out
}

test('every enum of e2bw.h has its copy in js-shim/core-module.mjs, with the same members and values', () => {
  const enums = headerEnums(readFileSync(path.join(repo, 'core/include/e2bw.h'), 'utf8'))
  assert.deepEqual(Object.keys(enums).sort(), ['ACTION', 'DETACHED', 'MESSAGE', 'NET'])
  for (const [group, members] of Object.entries(enums)) assert.deepEqual({ ...coreModule[group] }, members, group)
})

test('the header reader sees a changed value, so the comparison can fail', () => {
  const enums = headerEnums('typedef enum e2bw_net_failure {\n  E2BW_NET_REFUSED = 1, /* x */\n  E2BW_NET_DNS = 7\n} e2bw_net_failure;')
  assert.notDeepEqual({ ...coreModule.NET }, enums.NET)
  assert.deepEqual(enums, { NET: { REFUSED: 1, DNS: 7 } })
})
