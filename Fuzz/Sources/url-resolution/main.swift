// Fuzzes how a session turns its base URL and a verb's URL string into the request it sends:
// BaseURL.normalized and BaseURL.resolve (Sources/UVNetworking/API/BaseURL.swift), then the
// request target the connection parses from the result (RequestTarget).
//
// Input: the base URL's text, LF, the URL string given to the verb (any bytes; invalid UTF-8
// arrives as U+FFFD). Without an LF the whole input is the URL string and the base is
// "http://api.example.com/v1".
//
// Invariants (for a base with a scheme and a host, as a session's is):
// - normalized is idempotent, and leaves a non-empty path ending in "/".
// - A result is absolute: it has a scheme.
// - An absolute URL string ignores the base: its result is the string's own URL.
// - Resolution is idempotent (RFC 3986 §5.2 makes a resolved reference absolute): resolving a
//   result's text again, against this base or another, gives it back.
// - The empty string resolves to the base without its fragment (RFC 3986 §5.2.2).
// - "./" before a path-relative reference changes nothing (RFC 3986 §5.2.4 removes it).
// - An http(s) result gives the connection a request target with the same scheme, an
//   origin-form path starting "/" and no fragment, or a typed error; never a crash.

import Foundation
import FuzzSupport
@testable import UVNetworking

let otherBase = URL(string: "https://other.example.net/a/b/c?q#f")!

func check(baseText: String, reference: String) {
    // A session's base names a host. Without one RFC 3986 §5.2.4 can leave a path starting "//"
    // ("http:.///h/" with "x" gives "http://h/x"), which then reads as an authority (§5.3): see
    // docs/fuzzing.md.
    guard let rawBase = URL(string: baseText), rawBase.scheme != nil, rawBase.host != nil else { return }
    let base = BaseURL.normalized(rawBase)
    fuzzCheck(BaseURL.normalized(base) == base, "normalized is not idempotent on \(baseText.debugDescription)")
    // path(percentEncoded:) keeps a final "/", which `path` drops.
    let path = base.path(percentEncoded: true)
    if !path.isEmpty { fuzzCheck(path.hasSuffix("/"), "normalized left \(base) without a final /") }
    let empty = BaseURL.resolve("", against: base)?.absoluteString
    let fragmentless = base.absoluteString.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
    fuzzCheck(empty.map { $0[...] } == fragmentless, "the empty string resolved to \(empty.debugDescription), not \(base) without its fragment")

    guard let resolved = BaseURL.resolve(reference, against: base) else { return }
    let text = resolved.absoluteString
    fuzzCheck(resolved.scheme != nil, "\(reference.debugDescription) against \(base) gave \(text.debugDescription), without a scheme")
    if let own = URL(string: reference), own.scheme != nil {
        fuzzCheck(text == own.absoluteString, "the absolute \(reference.debugDescription) became \(text.debugDescription) against \(base)")
    }
    for other in [base, otherBase] {
        let again = BaseURL.resolve(text, against: other)?.absoluteString
        fuzzCheck(again == text, "\(reference.debugDescription) against \(base) gave \(text.debugDescription), which resolves to \(again.debugDescription) against \(other)")
    }
    if isPathRelative(reference) {
        let dotted = BaseURL.resolve("./" + reference, against: base)?.absoluteString
        fuzzCheck(dotted == text, "\"./\" + \(reference.debugDescription) gave \(dotted.debugDescription), not \(text.debugDescription)")
    }
    checkRequestTarget(resolved)
}

/// A relative reference whose path does not start with "/" or a dot segment and whose first
/// segment has no ":" (which "./" would turn from a scheme into a path).
func isPathRelative(_ reference: String) -> Bool {
    guard let first = reference.utf8.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "?"), first != UInt8(ascii: "#"),
          first != UInt8(ascii: "."), URL(string: reference)?.scheme == nil else { return false }
    let firstSegment = reference.utf8.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
    return !firstSegment.contains(UInt8(ascii: ":"))
}

func checkRequestTarget(_ url: URL) {
    guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return }
    guard let target = try? RequestTarget(absoluteURL: url.absoluteString) else { return }
    fuzzCheck(target.scheme == scheme, "\(url) gave a \(target.scheme) target")
    fuzzCheck(target.path.hasPrefix("/"), "\(url) gave the path \(target.path.debugDescription), not in origin form")
    fuzzCheck(!target.path.contains("#"), "\(url) kept its fragment in \(target.path.debugDescription)")
    fuzzCheck((0...65_535).contains(target.port), "\(url) gave the port \(target.port)")
    if let components = URLComponents(url: url, resolvingAgainstBaseURL: false), !components.percentEncodedPath.contains("#") {
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let expected = path + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        fuzzCheck(target.path == expected, "\(url) gave the target \(target.path.debugDescription), Foundation's parts \(expected.debugDescription)")
    }
}

runFuzzer { bytes in
    let text = String(decoding: bytes, as: UTF8.self)
    if let newline = text.firstIndex(of: "\n") {
        check(baseText: String(text[..<newline]), reference: String(text[text.index(after: newline)...]))
    } else {
        check(baseText: "http://api.example.com/v1", reference: text)
    }
}
