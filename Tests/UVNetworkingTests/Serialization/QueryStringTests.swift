import Foundation
import Testing
@testable import UVNetworking

/// AFNetworking's query-string rules and its own test vectors.
@Suite(.tags(.unit)) struct QueryStringTests {
    // MARK: Percent escaping

    @Test func reservedCharactersAreEscapedExceptSlashAndQuestionMark() {
        #expect(QueryString.percentEscaped(":#[]@!$&'()*+,;=?/") == "%3A%23%5B%5D%40%21%24%26%27%28%29%2A%2B%2C%3B%3D?/")
    }

    @Test func unreservedCharactersStay() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        #expect(QueryString.percentEscaped(unreserved) == unreserved)
    }

    @Test func spacePercentAndControlCharactersAreEscapedInUppercaseHex() {
        #expect(QueryString.percentEscaped("a b%c\r\n\"<>\\^`{|}") == "a%20b%25c%0D%0A%22%3C%3E%5C%5E%60%7B%7C%7D")
    }

    @Test func alreadyEscapedTextIsEscapedAgain() {
        #expect(QueryString.percentEscaped("%20") == "%2520")
        #expect(QueryString.string(from: ["key": "%20"]) == "key=%2520")
    }

    @Test func nonASCIIIsEscapedAsWholeUTF8Scalars() {
        #expect(QueryString.percentEscaped("é") == "%C3%A9")
        #expect(QueryString.percentEscaped("e\u{301}") == "e%CC%81")
        #expect(QueryString.percentEscaped("🇺🇸") == "%F0%9F%87%BA%F0%9F%87%B8")
        #expect(QueryString.percentEscaped("👴🏿") == "%F0%9F%91%B4%F0%9F%8F%BF")
    }

    @Test func emojiAcrossAFNetworkingsBatchBoundaryAreNotSplit() {
        // AFNetworking escapes in batches of 50 UTF-16 units; a surrogate pair at 49/50 is the
        // case it guards against.
        let text = String(repeating: "a", count: 49) + "👴🏿👷🏻👮🏽" + String(repeating: "b", count: 60)
        let escaped = QueryString.percentEscaped(text)
        #expect(escaped == String(repeating: "a", count: 49)
            + "%F0%9F%91%B4%F0%9F%8F%BF%F0%9F%91%B7%F0%9F%8F%BB%F0%9F%91%AE%F0%9F%8F%BD"
            + String(repeating: "b", count: 60))
        #expect(escaped.removingPercentEncoding == text)
    }

    // MARK: Query strings

    @Test func keysAndValuesAreEscapedAndPairsJoined() {
        #expect(QueryString.string(from: ["key": "value", "key1": "value&"]) == "key=value&key1=value%26")
        #expect(QueryString.string(from: ["a b": "c d", "é": "?/"]) == "a%20b=c%20d&%C3%A9=?/")
    }

    @Test func keysAreSortedByDescription() {
        #expect(QueryString.string(from: ["b": 1, "c": 3, "a": 2]) == "a=2&b=1&c=3")
        // Descriptions compare as strings: "10" before "9".
        #expect(QueryString.string(from: [9: "y", 10: "x"]) == "10=x&9=y")
    }

    @Test func emptyParametersGiveAnEmptyString() {
        #expect(QueryString.string(from: [String: Any]()) == "")
        #expect(QueryString.string(from: ["key": [String]()]) == "")
        #expect(QueryString.string(from: ["key": [String: Any]()]) == "")
    }

    @Test func nestedDictionariesUseBrackets() {
        #expect(QueryString.string(from: ["key": ["nested": "value"]]) == "key%5Bnested%5D=value")
        #expect(QueryString.string(from: ["a": ["b": ["c": "d"]], "e": "f"] as [String: Any]) == "a%5Bb%5D%5Bc%5D=d&e=f")
    }

    @Test func arraysRepeatTheKeyWithEmptyBrackets() {
        #expect(QueryString.string(from: ["key": ["a", "b", "a"]]) == "key%5B%5D=a&key%5B%5D=b&key%5B%5D=a")
        #expect(QueryString.string(from: ["key": [["x": 1], ["x": 2]]]) == "key%5B%5D%5Bx%5D=1&key%5B%5D%5Bx%5D=2")
    }

    @Test func setsAreSortedAndUseTheBareKey() {
        #expect(QueryString.string(from: ["key": Set(["c", "a", "b"])]) == "key=a&key=b&key=c")
        #expect(QueryString.string(from: ["key": NSSet(array: ["b", "a"])]) == "key=a&key=b")
    }

    @Test func nullAndNilGiveABareKey() {
        #expect(QueryString.string(from: ["key": NSNull()]) == "key")
        #expect(QueryString.string(from: ["a": 1, "b": NSNull(), "c": "x"] as [String: Any]) == "a=1&b&c=x")
        let missing: String? = nil
        #expect(QueryString.string(from: ["key": missing as Any]) == "key")
        let present: String? = "v"
        #expect(QueryString.string(from: ["key": present as Any]) == "key=v")
    }

    /// NSNull is told by its type, not by a cast: these are the places it can hide.
    @Test func nullInAnOptionalAnArrayOrASubclassGivesABareKey() {
        final class Placeholder: NSNull, @unchecked Sendable {}
        let wrapped: Any? = NSNull()
        #expect(QueryString.string(from: ["key": wrapped as Any]) == "key")
        #expect(QueryString.string(from: ["list": [NSNull(), "x"] as [Any]]) == "list%5B%5D&list%5B%5D=x")
        #expect(QueryString.string(from: ["key": Placeholder()]) == "key")
        #expect(QueryString.string(from: NSNull()) == "")
    }

    @Test func booleansAreOneAndZeroAsFromNSNumber() {
        #expect(QueryString.string(from: ["f": false, "t": true]) == "f=0&t=1")
        #expect(QueryString.string(from: ["f": NSNumber(value: false), "t": NSNumber(value: true)]) == "f=0&t=1")
        // An integer that happens to be 1 stays an integer.
        #expect(QueryString.string(from: ["n": 1, "m": 2.5] as [String: Any]) == "m=2.5&n=1")
    }

    @Test func foundationCollectionsAreFlattenedLikeSwiftOnes() {
        let parameters = NSDictionary(dictionary: ["list": NSArray(array: ["x", NSNumber(value: 3)]),
                                                   "null": NSNull(), "sub": NSDictionary(dictionary: ["k": "v"])])
        #expect(QueryString.string(from: parameters) == "list%5B%5D=x&list%5B%5D=3&null&sub%5Bk%5D=v")
    }

    @Test func topLevelValuesWithoutKeysGetTheEmptyName() {
        #expect(QueryString.string(from: ["a", "b"]) == "%5B%5D=a&%5B%5D=b")
        #expect(QueryString.string(from: "text") == "=text")
    }

    // MARK: Pairs

    @Test func pairsAreUnescapedWithNilForNull() {
        let pairs = QueryString.pairs(from: ["key": ["a": NSNull(), "b": [1, 2]] as [String: Any], "z y": "&"] as [String: Any])
        #expect(pairs.map(\.name) == ["key[a]", "key[b][]", "key[b][]", "z y"])
        #expect(pairs.map(\.value) == [nil, "1", "2", "&"])
    }

    @Test func valuePairsKeepValuesAsGiven() {
        let data = Data([0, 1, 2])
        let pairs = QueryString.valuePairs(from: ["file": data, "flag": true] as [String: Any])
        #expect(pairs.map(\.name) == ["file", "flag"])
        #expect(pairs[0].value as? Data == data)
        #expect(pairs[1].value as? Bool == true)
    }
}
