// Fuzzes the query-string encoder (Sources/UVNetworking/Serialization/QueryString.swift): a
// parameter tree decoded from the input is encoded, then read back by decoders written elsewhere.
//
// Input: a parameter tree, read front to back (reading past the end gives zeros): a node is one
// byte, its kind in bits 0-2:
//   0 text: a length byte, then that many bytes (invalid UTF-8 becomes U+FFFD)
//   1 number: the next byte as a signed Int     2 Bool: bit 3 of the node byte
//   3 NSNull                                    4 nil (an empty Optional)
//   5 dictionary: a count byte (0-3), then per entry a text key and a node
//   6 array: a count byte (0-3), then nodes     7 set of texts: a count byte (0-3), then texts
// Below depth 4 every node is text. The top node is a dictionary unless the first byte's bit 7 is
// set.
//
// Invariants:
// - Flattening gives the pairs AFNetworking's rules give, computed here on their own: keys
//   sorted, "key[sub]" for dictionaries, "key[]" for arrays, sets under the key itself, a bare
//   key for NSNull and nil, "1"/"0" for Bool.
// - Encode then parse: the string, split at "&" and the first "=" and percent-decoded, gives back
//   those pairs byte for byte; so do URLComponents' queryItems.
// - The string holds only unreserved characters, "/", "?", "%", "=" and "&", and every "%" starts
//   an escape of two uppercase hex digits.

import Foundation
import FuzzSupport
@testable import UVNetworking

indirect enum Node {
    case text(String), number(Int), flag(Bool), null, missing
    case dictionary([String: Node]), list([Node]), set(Set<String>)

    /// The value handed to QueryString.
    var value: Any {
        switch self {
        case .text(let text): return text
        case .number(let number): return number
        case .flag(let flag): return flag
        case .null: return NSNull()
        case .missing: return String?.none as Any
        case .dictionary(let entries): return entries.mapValues(\.value)
        case .list(let nodes): return nodes.map(\.value)
        case .set(let texts): return texts
        }
    }

    /// The pairs the documented rules give.
    func pairs(key: String?) -> [Pair] {
        switch self {
        case .text(let text): return [Pair(name: key ?? "", value: text)]
        case .number(let number): return [Pair(name: key ?? "", value: String(number))]
        case .flag(let flag): return [Pair(name: key ?? "", value: flag ? "1" : "0")]
        case .null, .missing: return [Pair(name: key ?? "", value: nil)]
        case .dictionary(let entries):
            return entries.keys.sorted().flatMap { name in entries[name]!.pairs(key: key.map { "\($0)[\(name)]" } ?? name) }
        case .list(let nodes): return nodes.flatMap { $0.pairs(key: (key ?? "") + "[]") }
        case .set(let texts): return texts.sorted().map { Pair(name: key ?? "", value: $0) }
        }
    }
}

/// A pair compared byte for byte (String's == would equate canonically equivalent texts).
struct Pair: Equatable, CustomStringConvertible {
    var name: [UInt8], value: [UInt8]?
    init(name: String, value: String?) {
        self.name = Array(name.utf8)
        self.value = value.map { Array($0.utf8) }
    }
    var description: String { "\(String(decoding: name, as: UTF8.self).debugDescription)=\(value.map { String(decoding: $0, as: UTF8.self).debugDescription } ?? "nil")" }
}

func readText(_ input: inout FuzzInput) -> String {
    String(decoding: input.bytes(Int(input.byte())), as: UTF8.self)
}

func readNode(_ input: inout FuzzInput, depth: Int) -> Node {
    let kind = input.byte()
    guard depth < 4 else { return .text(readText(&input)) }
    switch kind & 7 {
    case 0: return .text(readText(&input))
    case 1: return .number(Int(Int8(bitPattern: input.byte())))
    case 2: return .flag(kind & 8 != 0)
    case 3: return .null
    case 4: return .missing
    case 5: return readDictionary(&input, depth: depth)
    case 6: return .list((0..<(input.byte() & 3)).map { _ in readNode(&input, depth: depth + 1) })
    default: return .set(Set((0..<(input.byte() & 3)).map { _ in readText(&input) }))
    }
}

func readDictionary(_ input: inout FuzzInput, depth: Int) -> Node {
    var entries: [String: Node] = [:]
    for _ in 0..<(input.byte() & 3) {
        let key = readText(&input)
        entries[key] = readNode(&input, depth: depth + 1)
    }
    return .dictionary(entries)
}

/// "%" then two uppercase hex digits, or a byte that needs no escape.
func isWellFormed(_ query: String) -> Bool {
    let bytes = Array(query.utf8)
    var index = 0
    while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "%") {
            guard index + 2 < bytes.count, bytes[(index + 1)...(index + 2)].allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x46).contains($0) }) else { return false }
            index += 3
            continue
        }
        let allowed = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || "-._~/?=&".utf8.contains(byte)
        guard allowed else { return false }
        index += 1
    }
    return true
}

/// The query split at "&" and each pair at its first "=", then percent-decoded.
func decodedBySplitting(_ query: String) -> [Pair]? {
    var pairs: [Pair] = []
    for piece in query.split(separator: "&", omittingEmptySubsequences: false) {
        let parts = piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = parts[0].removingPercentEncoding else { return nil }
        let value = parts.count == 2 ? parts[1].removingPercentEncoding : nil
        if parts.count == 2 && value == nil { return nil }
        pairs.append(Pair(name: name, value: value))
    }
    return pairs
}

runFuzzer { bytes in
    var input = FuzzInput(bytes)
    let tree = bytes.first.map { $0 & 0x80 != 0 } == true ? readNode(&input, depth: 0) : readDictionary(&input, depth: 0)
    let expected = tree.pairs(key: nil)
    let flattened = QueryString.pairs(from: tree.value).map { Pair(name: $0.name, value: $0.value) }
    fuzzCheck(flattened == expected, "flattened to \(flattened), the rules give \(expected)")

    let query = QueryString.string(from: tree.value)
    fuzzCheck(isWellFormed(query), "\(query.debugDescription) has a character that needs an escape, or a bad escape")
    // One pair with an empty name and no value encodes as "", as no pair at all does.
    guard !query.isEmpty else {
        fuzzCheck(expected.isEmpty || expected == [Pair(name: "", value: nil)], "\(expected) encoded as nothing")
        return
    }
    let split = decodedBySplitting(query)
    fuzzCheck(split == expected, "\(query.debugDescription) splits into \(String(describing: split)), not \(expected)")
    var components = URLComponents()
    components.percentEncodedQuery = query
    let items = components.queryItems?.map { Pair(name: $0.name, value: $0.value) }
    fuzzCheck(items == expected, "URLComponents reads \(query.debugDescription) as \(String(describing: items)), not \(expected)")
}
