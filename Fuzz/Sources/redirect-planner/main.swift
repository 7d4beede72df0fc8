// Fuzzes the redirect planner (RFC 9110 §15.4, Sources/UVNetworking/Engine/Redirects/
// RedirectPlanner.swift): the request that follows a redirect response, or why there is none.
//
// Input: 4 option bytes, then the request URL, LF, the Location value (any bytes; invalid UTF-8
// arrives as U+FFFD). Without an LF the request URL is "https://user:pw@example.com/a/b?q#frag"
// and the whole text is the Location.
//   byte 0  status: 301 302 303 307 308 300 304 200, by bits 0-2; bit 3: no Location field
//   byte 1  method: GET POST HEAD PUT DELETE PATCH OPTIONS CONNECT, by bits 0-2; bit 3: a body
//   byte 2  maximumRedirects: bits 0-2; allowsHTTPSToHTTP: bit 3; requests already made: bits 4-7
//   byte 3  which fields the request carries: Authorization, Cookie, Proxy-Authorization,
//           Content-Type, Content-Length, Transfer-Encoding, Host, X-Trace (bits 0-7), in
//           varied case
//
// Invariants:
// - Only a redirect status with a Location that is not blank is followed (isRedirectToFollow,
//   which the runner asks before it plans).
// - A planned request goes to an http or https URL with a host; never https to http unless
//   allowed; never past maximumRedirects; never from a response without a usable Location.
// - Method and body: 303 gives GET without a body or Content-*/Transfer-Encoding fields (but
//   for HEAD); 301 and 302 do so for POST only; 307 and 308 keep method, body and fields.
// - Another origin (scheme, host, port; computed here on its own) gets no Authorization, Cookie
//   or Proxy-Authorization, and no user or password but the Location's own; the same origin
//   keeps them. Host is never carried over; other fields are.
// - A Location without a fragment gets the request's.
// - The planner is a function: the same inputs give the same answer.

import Foundation
import FuzzSupport
import HTTPTypes
@testable import UVNetworking

let statuses = [301, 302, 303, 307, 308, 300, 304, 200]
let methods: [HTTPRequest.Method] = [.get, .post, .head, .put, .delete, .patch, .options, .connect]
let fieldNames = ["Authorization", "cookie", "PROXY-AUTHORIZATION", "Content-Type", "content-length", "Transfer-Encoding", "host", "X-Trace"]
let credentialFields: Set<String> = ["authorization", "cookie", "proxy-authorization"]
let defaultURL = "https://user:pw@example.com/a/b?q#frag"

/// Scheme, lowercased host and port with the scheme's default, read on their own.
func origin(_ url: URL) -> String {
    let scheme = url.scheme?.lowercased() ?? ""
    return "\(scheme)|\(url.host?.lowercased() ?? "")|\(url.port ?? (scheme == "https" ? 443 : 80))"
}

func lowercasedNames(_ request: Request) -> [String] { request.headerFields.map { $0.name.lowercased() } }

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let statusByte = input.byte(), methodByte = input.byte(), limitByte = input.byte(), fieldByte = input.byte()
    let text = String(decoding: input.remaining(), as: UTF8.self)
    let urlText: String, locationText: String
    if let newline = text.firstIndex(of: "\n") {
        urlText = String(text[..<newline])
        locationText = String(text[text.index(after: newline)...])
    } else {
        urlText = defaultURL
        locationText = text
    }
    // A session only sends absolute http(s) URLs with a host.
    guard let from = URL(string: urlText), let fromScheme = from.scheme?.lowercased(), fromScheme == "http" || fromScheme == "https",
          let fromHost = from.host, !fromHost.isEmpty else { return }

    let status = statuses[Int(statusByte & 7)]
    let location: String? = statusByte & 8 != 0 ? nil : locationText
    var request = Request(url: from, method: methods[Int(methodByte & 7)], body: methodByte & 8 != 0 ? Data("body".utf8) : nil)
    request.headerFields = fieldNames.indices.filter { fieldByte & (1 << $0) != 0 }.map { (fieldNames[$0], "v\($0)") }
    let limits = RedirectPlanner.Limits(maximumRedirects: Int(limitByte & 7), allowsHTTPSToHTTP: limitByte & 8 != 0)
    let visited = (0...Int(limitByte >> 4)).map { RedirectPlanner.Visit(method: request.method, url: "\(urlText)#\($0)") }

    // The runner plans only what isRedirectToFollow accepts.
    let follows = RedirectPlanner.isRedirectToFollow(status: status, location: location)
    fuzzCheck(!follows || (RedirectPlanner.isRedirect(status) && location!.contains { $0 != " " && $0 != "\t" }),
              "a \(status) with the Location \(location.debugDescription) would be followed")
    guard follows else { return }
    let result = RedirectPlanner.nextRequest(after: request, status: status, location: location, visited: visited, limits: limits)
    let again = RedirectPlanner.nextRequest(after: request, status: status, location: location, visited: visited, limits: limits)
    switch (result, again) {
    case (.success(let a), .success(let b)):
        fuzzCheck(a.url == b.url && a.method == b.method && a.body == b.body && a.headerFields.elementsEqual(b.headerFields, by: { $0 == $1 }),
                  "two plans for the same inputs differ")
    case (.failure(let a), .failure(let b)):
        fuzzCheck(a.kind == b.kind, "two plans for the same inputs failed differently")
    default:
        fuzzCheck(false, "the same inputs once planned and once failed")
    }
    guard case .success(let next) = result else { return }
    let target = next.url

    fuzzCheck(location.map { !$0.isEmpty } ?? false, "a redirect planned without a Location")
    let scheme = target.scheme?.lowercased()
    fuzzCheck(scheme == "http" || scheme == "https", "a redirect to \(target.absoluteString.debugDescription)")
    fuzzCheck(target.host != nil, "a redirect to \(target.absoluteString.debugDescription), without a host")
    fuzzCheck(!(fromScheme == "https" && scheme == "http") || limits.allowsHTTPSToHTTP, "https to http without leave: \(target)")
    fuzzCheck(visited.count <= limits.maximumRedirects, "redirect number \(visited.count) allowed past \(limits.maximumRedirects)")

    let becomesGET = (status == 303 && request.method != .head) || ((status == 301 || status == 302) && request.method == .post)
    let names = lowercasedNames(next)
    if becomesGET {
        fuzzCheck(next.method == .get && next.body == nil, "\(status) after \(request.method) kept \(next.method) or its body")
        fuzzCheck(!names.contains { $0.hasPrefix("content-") || $0 == "transfer-encoding" }, "\(status) kept the body's fields: \(names)")
    } else {
        fuzzCheck(next.method == request.method && next.body == request.body, "\(status) changed \(request.method) to \(next.method) or the body")
        let bodyFields = lowercasedNames(request).filter { $0.hasPrefix("content-") || $0 == "transfer-encoding" }
        fuzzCheck(bodyFields.allSatisfy(names.contains), "\(status) dropped a body field: \(names)")
    }
    fuzzCheck(!names.contains("host"), "Host was carried over")
    fuzzCheck(names.contains("x-trace") == lowercasedNames(request).contains("x-trace"), "an ordinary field was dropped or added")

    let resolvedLocation = URL(string: location!, relativeTo: from)?.absoluteURL
    if origin(from) == origin(target) {
        let kept = lowercasedNames(request).filter(credentialFields.contains)
        fuzzCheck(kept.allSatisfy(names.contains), "credentials dropped within \(origin(from))")
    } else {
        fuzzCheck(!names.contains(where: credentialFields.contains), "credentials from \(origin(from)) sent to \(origin(target)): \(names)")
        fuzzCheck(target.user(percentEncoded: true) == resolvedLocation?.user(percentEncoded: true)
                  && target.password(percentEncoded: true) == resolvedLocation?.password(percentEncoded: true),
                  "\(origin(target)) got the user of \(origin(from)): \(target)")
    }
    if resolvedLocation?.fragment == nil, let fragment = from.fragment {
        fuzzCheck(target.fragment == fragment, "\(target) lost the request's fragment \(fragment.debugDescription)")
    }
}
