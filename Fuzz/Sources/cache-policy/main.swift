// Fuzzes the HTTP cache's decisions (RFC 9111): Cache-Control's parsing, freshness and age,
// reuse under request directives, storability, the 304 merge, Vary and a HEAD's confirmation.
//
// Input: a status byte (mapped onto 100...599), three time bytes (the request's round trip,
// the seconds since the response came, and a Date offset), then lines: those before an empty
// line are the response's fields, those after it the request's ("name: value"; a line without
// a colon is skipped, as are names swift-http-types refuses).
//
// Invariants:
// - Nothing traps, whatever the bytes.
// - The lifetime and the age are finite and at least 0; the age grows with time and a fresh
//   response turns stale only once; a valid max-age is the lifetime, whatever Expires says.
// - Cache-Control split over several fields parses as the one joined list (for lists without
//   quoted strings: an unclosed quote runs to the end of its own field).
// - no-cache on either side always revalidates; reuse as fresh means fresh (and, with
//   min-fresh, fresh for that long); a stale response is served only under the request's
//   max-stale and never with must-revalidate.
// - no-store on either side, a method other than GET, a 206 or a 304 is never stored.
// - A 304's merge keeps the stored Content-Length, takes every other field the 304 sends
//   (connection fields aside), and merging a response with itself changes nothing it had.
// - A request's Vary selection always matches itself; Vary: * never matches.
// - A HEAD's fields equal to the stored ones always confirm them; a HEAD whose ETag or
//   Last-Modified differs from the stored one's never does.

import Foundation
import FuzzSupport
import HTTPTypes
@testable import UVNetworking

let origin = Date(timeIntervalSince1970: 1_800_000_000)

func fields(_ lines: ArraySlice<ArraySlice<UInt8>>) -> HTTPFields {
    var result = HTTPFields()
    for line in lines {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")),
              let name = HTTPField.Name(String(decoding: line[line.startIndex..<colon], as: UTF8.self)) else { continue }
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        // swift-http-types takes any value; the cache reads what a parser would have kept.
        guard value.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else { continue }
        result.append(HTTPField(name: name, value: value))
    }
    return result
}

func checkParsing(_ fields: HTTPFields) {
    let values = fields[values: .cacheControl]
    // A quoted string left open runs to the end of its field; joined, it would run on into the
    // next field's directives. Only lists whose quotes close are the same split and joined.
    guard values.count > 1, values.allSatisfy({ $0.utf8.filter { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }.isEmpty }) else { return }
    var joined = HTTPFields()
    joined[.cacheControl] = values.joined(separator: ", ")
    fuzzCheck(CacheControl(fields) == CacheControl(joined), "Cache-Control \(values) split and joined parse apart")
}

func checkFreshness(_ freshness: CacheFreshness, control: CacheControl, now: Date) {
    fuzzCheck(freshness.lifetime.isFinite && freshness.lifetime >= 0, "lifetime \(freshness.lifetime)")
    fuzzCheck(freshness.initialAge.isFinite && freshness.initialAge >= 0, "initial age \(freshness.initialAge)")
    let later = now.addingTimeInterval(10)
    fuzzCheck(freshness.age(at: later) >= freshness.age(at: now), "age went back")
    if !freshness.isFresh(at: now) { fuzzCheck(!freshness.isFresh(at: later), "stale, then fresh again") }
    if let maxAge = control.maxAge { fuzzCheck(freshness.lifetime == TimeInterval(maxAge), "max-age \(maxAge), lifetime \(freshness.lifetime)") }
}

func checkReuse(_ freshness: CacheFreshness, response: CacheControl, request: CacheControl, now: Date) {
    let decision = CacheReuse.decide(freshness, response: response, request: request, now: now)
    if response.noCache || request.noCache { fuzzCheck(decision == .validate, "no-cache, yet \(decision)") }
    switch decision {
    case .fresh:
        fuzzCheck(freshness.isFresh(at: now), "fresh, yet the age has reached the lifetime")
        if let minFresh = request.minFresh {
            fuzzCheck(freshness.isFresh(at: now.addingTimeInterval(TimeInterval(minFresh) - 0.001)) || minFresh == 0,
                      "min-fresh=\(minFresh), not fresh that long")
        }
        if let maxAge = request.maxAge { fuzzCheck(freshness.age(at: now) <= TimeInterval(maxAge), "older than the request's max-age") }
    case .staleAccepted:
        fuzzCheck(!freshness.isFresh(at: now) && request.maxStale != nil && !response.mustRevalidate, "stale served without max-stale")
        fuzzCheck(freshness.initialAge < freshness.lifetime, "a response stale on arrival served stale")
    case .validate:
        break
    }
}

func checkStorage(status: Int, response fields: HTTPFields, control: CacheControl, request: CacheControl) {
    for method in [HTTPRequest.Method.get, .post, .head] {
        let stored = CacheStorePolicy.mayStore(method: method, status: status, fields: fields, response: control, request: request)
        if control.noStore || request.noStore || method != .get || status == 206 || status == 304 {
            fuzzCheck(!stored, "stored: \(method) \(status), no-store \(control.noStore)/\(request.noStore)")
        }
    }
}

func checkMerge(_ stored: HTTPFields, _ update: HTTPFields) {
    let merged = CacheStorePolicy.fields(stored, updatedBy: update)
    fuzzCheck(merged[values: .contentLength] == stored[values: .contentLength], "the 304 changed Content-Length")
    let connectionNamed = Set(update[values: .connection].flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } })
    let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "content-length"]
    for field in update where !hopByHop.contains(field.name.canonicalName) && !connectionNamed.contains(field.name.canonicalName) {
        fuzzCheck(merged[values: field.name] == update[values: field.name], "\(field.name) not taken from the 304")
    }
    let same = CacheStorePolicy.fields(stored, updatedBy: stored)
    for field in stored where !hopByHop.contains(field.name.canonicalName) {
        let named = Set(stored[values: .connection].flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() } })
        guard !named.contains(field.name.canonicalName) else { continue }
        fuzzCheck(same[values: field.name] == stored[values: field.name], "merging with itself changed \(field.name)")
    }
}

func checkHEAD(_ stored: HTTPFields, _ head: HTTPFields) {
    fuzzCheck(CacheStorePolicy.headConfirms(stored, stored: stored), "a HEAD with the stored fields did not confirm them")
    for name in [HTTPField.Name.eTag, .lastModified] {
        guard let value = head[name], stored[name] != value else { continue }
        fuzzCheck(!CacheStorePolicy.headConfirms(head, stored: stored), "a HEAD with another \(name) confirmed the stored response")
    }
}

func checkVary(_ response: HTTPFields, _ request: HTTPFields) {
    let names = CacheVary.names(in: response)
    let selection = CacheVary.selected(names, from: request)
    fuzzCheck(CacheVary.matches(storedNames: names, storedValues: selection, request: request) == !names.contains("*"),
              "a Vary selection (\(names)) and its own request")
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let status = 100 + Int(input.byte()) * 2
    let roundTrip = TimeInterval(input.byte())
    let resident = TimeInterval(input.byte()) * 7
    let dateOffset = TimeInterval(Int(input.byte()) - 128) * 5
    let lines = input.remaining().split(separator: 0x0A, omittingEmptySubsequences: false).map { $0.last == 0x0D ? $0.dropLast() : $0 }
    let blank = lines.firstIndex(where: \.isEmpty) ?? lines.endIndex
    var response = fields(lines[..<blank])
    let request = fields(blank < lines.endIndex ? lines[(blank + 1)...] : [])
    if dateOffset != 0, response[.date] == nil { response[.date] = imfFixdate(origin.addingTimeInterval(dateOffset)) }
    let control = CacheControl(response)
    let asked = CacheControl(request, isRequest: true)
    let freshness = CacheFreshness(status: status, fields: response, control: control,
                                   requestTime: origin.addingTimeInterval(-roundTrip), responseTime: origin)
    let now = origin.addingTimeInterval(resident)
    checkParsing(response)
    checkParsing(request)
    checkFreshness(freshness, control: control, now: now)
    checkReuse(freshness, response: control, request: asked, now: now)
    checkStorage(status: status, response: response, control: control, request: asked)
    checkMerge(response, request)
    checkVary(response, request)
    checkHEAD(response, request)
}
