// layout.mjs — what the Chromium tests ask of a page's layout, measured in the
// page itself (playwright-core): horizontal overflow, elements cut off by the
// window, text wrapped onto several lines or squeezed, text cut by its box.
//
//   import { layoutProblems } from './layout.mjs'
//   const problems = await layoutProblems(page, {
//     inViewport: ['#kill', '.editor-head button'],  // every visible match lies wholly inside the window
//     oneLine: ['td.name .label', '.editor-name'],    // every visible match with text is one line of it...
//     minWidth: 80,                                    // ...at least this wide (px) or as wide as its text
//     placeholdersFit: ['#connect input'],             // each placeholder fits its input
//     contained: [['.panel', 'table.list']],           // every visible match lies inside its closest container
//   })
//   assert.deepEqual(problems, [])   // e.g. ['.editor-name "/home/user/a.txt": 3 lines']

/** A list of readable problems; empty when the layout is good. */
export function layoutProblems(page, { inViewport = [], oneLine = [], minWidth = 0, placeholdersFit = [], contained = [] } = {}) {
  return page.evaluate(({ inViewport, oneLine, minWidth, placeholdersFit, contained }) => {
    const problems = []
    const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden'
    const all = (selector) => [...document.querySelectorAll(selector)].filter(visible)
    const name = (selector, el) => `${selector} ${JSON.stringify((el.textContent || el.placeholder || '').trim().slice(0, 40))}`

    const { scrollWidth } = document.documentElement
    if (scrollWidth > innerWidth) problems.push(`the page is ${scrollWidth} px wide in a ${innerWidth} px window`)

    for (const selector of inViewport) {
      for (const el of all(selector)) {
        const r = el.getBoundingClientRect()
        if (r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight)
          problems.push(`${name(selector, el)} is not wholly in the window: ${Math.round(r.left)}..${Math.round(r.right)} × ${Math.round(r.top)}..${Math.round(r.bottom)}`)
      }
    }

    // Lines of text: the distinct tops of the text's line boxes.
    const lines = (el) => {
      const range = document.createRange()
      range.selectNodeContents(el)
      return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size
    }
    for (const selector of oneLine) {
      for (const el of all(selector)) {
        if (!el.textContent.trim()) continue
        const n = lines(el)
        if (n !== 1) problems.push(`${name(selector, el)}: ${n} lines`)
        // Narrower than minWidth while its text needs more room (1 px for rounding).
        const width = el.getBoundingClientRect().width
        if (width + 1 < Math.min(minWidth, el.scrollWidth)) problems.push(`${name(selector, el)}: squeezed to ${Math.round(width)} px`)
      }
    }

    for (const [container, selector] of contained) {
      for (const el of all(selector)) {
        const box = el.closest(container)?.getBoundingClientRect()
        const r = el.getBoundingClientRect()
        if (box && (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5))
          problems.push(`${name(selector, el)} sticks out of its ${container}: ${Math.round(r.left)}..${Math.round(r.right)} in ${Math.round(box.left)}..${Math.round(box.right)}`)
      }
    }

    const ctx = document.createElement('canvas').getContext('2d')
    for (const selector of placeholdersFit) {
      for (const input of all(selector).filter((el) => el.placeholder)) {
        const style = getComputedStyle(input)
        ctx.font = style.font
        const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
        const need = ctx.measureText(input.placeholder).width
        if (need > room) problems.push(`${name(selector, input)}: the placeholder needs ${Math.ceil(need)} px, the input has ${Math.floor(room)}`)
      }
    }
    return problems
  }, { inViewport, oneLine, minWidth, placeholdersFit, contained })
}
