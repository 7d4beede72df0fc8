import Foundation
import Testing
@testable import UVNetworking

/// Our base-URL resolution against Foundation's `URL(string:relativeTo:)` on the same inputs: RFC
/// 3986 §5.4's examples, which are facts, and the url-resolution fuzz harness's seeds and
/// regressions. Every disagreement must be one docs/fuzzing.md lists ("Differential checks: URL
/// resolution"); a new one fails here.
@Suite(.tags(.unit)) struct BaseURLDifferentialTests {
    /// RFC 3986 §5.4's base URI.
    static let rfcBase = URL(string: "http://a/b/c/d;p?q")!

    /// §5.4.1 (normal) and §5.4.2 (abnormal) examples: reference and target, for a strict parser.
    static let rfcExamples: [(String, String)] = [
        ("g:h", "g:h"), ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"),
        ("/g", "http://a/g"), ("//g", "http://g"), ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"),
        ("#s", "http://a/b/c/d;p?q#s"), ("g#s", "http://a/b/c/g#s"), ("g?y#s", "http://a/b/c/g?y#s"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("g;x?y#s", "http://a/b/c/g;x?y#s"),
        ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"), ("./", "http://a/b/c/"), ("..", "http://a/b/"),
        ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"), ("../../", "http://a/"),
        ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("../../../../g", "http://a/g"), ("/./g", "http://a/g"), ("/../g", "http://a/g"),
        ("g.", "http://a/b/c/g."), (".g", "http://a/b/c/.g"), ("g..", "http://a/b/c/g.."), ("..g", "http://a/b/c/..g"),
        ("./../g", "http://a/b/g"), ("./g/.", "http://a/b/c/g/"), ("g/./h", "http://a/b/c/g/h"),
        ("g/../h", "http://a/b/c/h"), ("g;x=1/./y", "http://a/b/c/g;x=1/y"), ("g;x=1/../y", "http://a/b/c/y"),
        ("g?y/./x", "http://a/b/c/g?y/./x"), ("g?y/../x", "http://a/b/c/g?y/../x"),
        ("g#s/./x", "http://a/b/c/g#s/./x"), ("g#s/../x", "http://a/b/c/g#s/../x"), ("http:g", "http:g"),
    ]

    /// Why our result may differ from Foundation's, as docs/fuzzing.md's table lists them.
    enum Reason: Equatable {
        /// Foundation makes no URL from ""; RFC 3986 §5.2.2 makes it the base without its fragment
        /// (the normalized base, on the session's path).
        case emptyReference
        /// The session resolves against its normalized base (a non-empty path gains a final "/",
        /// as in AFNetworking), so §5.2.3's merge keeps the base's last segment.
        case normalizedBase
    }

    /// Why `ours` (for `reference` against `base` as the session resolves it) differs from
    /// Foundation's answer; nil when they agree or when no listed reason explains it.
    static func reason(reference: String, base: URL, ours: String?, foundation: String?) -> Reason? {
        if reference.isEmpty, foundation == nil, ours == fragmentless(BaseURL.normalized(base)) { return .emptyReference }
        let normalized = BaseURL.normalized(base)
        if normalized != base, URL(string: reference, relativeTo: normalized)?.absoluteURL.absoluteString == ours { return .normalizedBase }
        return nil
    }

    static func fragmentless(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
    }

    /// Base and reference pairs from the harness's seeds and regressions (base, LF, reference; a
    /// file without LF is a reference against the harness's default base).
    static func corpusInputs() throws -> [(file: String, base: String, reference: String)] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz")
        var inputs: [(file: String, base: String, reference: String)] = []
        for directory in ["corpora/url-resolution/seeds", "regressions/url-resolution"] {
            let folder = root.appendingPathComponent(directory)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            for name in names.sorted() {
                let text = String(decoding: try Data(contentsOf: folder.appendingPathComponent(name)), as: UTF8.self)
                if let newline = text.firstIndex(of: "\n") {
                    inputs.append((file: "\(directory)/\(name)", base: String(text[..<newline]), reference: String(text[text.index(after: newline)...])))
                } else {
                    inputs.append((file: "\(directory)/\(name)", base: "http://api.example.com/v1", reference: text))
                }
            }
        }
        return inputs
    }

    @Test func ourResolutionGivesEveryRFCExample() {
        for (reference, expected) in Self.rfcExamples {
            #expect(BaseURL.resolve(reference, against: Self.rfcBase)?.absoluteString == expected, "\(reference.debugDescription)")
        }
    }

    @Test func foundationGivesEveryRFCExampleButTheEmptyReference() {
        let disagreements = Self.rfcExamples.filter { reference, expected in
            URL(string: reference, relativeTo: Self.rfcBase)?.absoluteURL.absoluteString != expected
        }.map(\.0)
        #expect(disagreements == [""])
    }

    @Test func theEmptyReferenceIsTheBaseWithoutItsFragment() {
        let base = URL(string: "https://api.example.com/v1/?key=1#top")!
        #expect(BaseURL.resolve("", against: base)?.absoluteString == "https://api.example.com/v1/?key=1")
        #expect(BaseURL.resolve("", against: Self.rfcBase)?.absoluteString == "http://a/b/c/d;p?q")
    }

    @Test func everyDisagreementWithFoundationOnTheCorpusIsAListedOne() throws {
        let inputs = try Self.corpusInputs()
        #expect(inputs.count >= 40)
        var reasons: [Reason] = []
        for input in inputs {
            guard let base = URL(string: input.base), base.scheme != nil else { continue }
            // The session's path: the base normalized once, then each URL string resolved.
            let ours = BaseURL.resolve(input.reference, against: BaseURL.normalized(base))?.absoluteString
            let foundation = URL(string: input.reference, relativeTo: base)?.absoluteURL.absoluteString
            guard ours != foundation else { continue }
            let reason = Self.reason(reference: input.reference, base: base, ours: ours, foundation: foundation)
            #expect(reason != nil, "\(input.file): ours \(ours.debugDescription), Foundation's \(foundation.debugDescription)")
            if let reason { reasons.append(reason) }
        }
        // Both listed reasons occur in the corpus, so the table describes what the check sees.
        #expect(reasons.contains(.emptyReference) && reasons.contains(.normalizedBase))
    }
}
