// chromium.mjs — launches Debian's Chromium headless through playwright-core,
// with the flags DESIGN.md lists. /usr/bin/chromium (apt-get install -y chromium;
// ./build.sh test installs it), or $E2BW_CHROMIUM. Missing Chromium is an
// error, never a skip.
import { existsSync } from 'node:fs'
import { chromium } from 'playwright-core'

export const CHROMIUM = process.env.E2BW_CHROMIUM || '/usr/bin/chromium'
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic']

export async function launchChromium() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not installed at ${CHROMIUM}: run 'apt-get install -y chromium' ` +
      '(./build.sh test does this) or point E2BW_CHROMIUM at a Chromium binary. This suite fails without it; it never skips.')
  }
  try {
    return await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60000 })
  } catch (err) {
    throw new Error(`cannot launch Chromium at ${CHROMIUM}: ${err.message}`)
  }
}
