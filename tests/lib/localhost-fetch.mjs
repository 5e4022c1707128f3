// GET a URL whose host is a *.localhost name (the local backend's
// "<port>-<id>.localhost:<port>"), resolving that name to 127.0.0.1 as
// browsers and systemd's resolver do (RFC 6761). Node asks the system
// resolver instead, which on many machines sends the name to a DNS server
// off the machine: a test must never do that.
import http from 'node:http'

export function getLocalhostUrl(url, headers = {}) {
  const u = new URL(url)
  if (!u.hostname.endsWith('.localhost')) throw new Error(`not a *.localhost URL: ${url}`)
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port: u.port || 80, path: u.pathname + u.search, headers: { ...headers, Host: u.host } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }))
    })
    req.on('error', reject)
  })
}
