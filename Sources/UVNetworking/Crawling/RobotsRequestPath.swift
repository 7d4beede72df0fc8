import Foundation

/// What a rule is matched against (RFC 9309 §2.2.2): a URL's path and query, normalised as the
/// patterns are (`RobotsPathNormalization`); "/" stands for an empty path. The one allocation a
/// decision makes.
struct RobotsRequestPath {
    let bytes: [UInt8]

    /// The path and query of `url` as written in it (percent-escapes kept); never its fragment,
    /// which no request sends.
    init(_ url: URL) {
        let absolute = url.baseURL == nil ? url : url.absoluteURL
        let path = absolute.path(percentEncoded: true)
        let query = absolute.query(percentEncoded: true)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(path.utf8.count + (query?.utf8.count ?? -1) + 2)
        if path.utf8.first != UInt8(ascii: "/") { bytes.append(UInt8(ascii: "/")) }
        RobotsPathNormalization.append(path.utf8, asPattern: false, to: &bytes)
        if let query {
            bytes.append(UInt8(ascii: "?"))
            RobotsPathNormalization.append(query.utf8, asPattern: false, to: &bytes)
        }
        self.bytes = bytes
    }

    /// A request target's path and query ("/a/b?c=d"); from a "#" on, the text is a fragment
    /// and left out. Text not starting with "/" is read as if it did, so "" is "/".
    init(pathAndQuery: some StringProtocol) {
        var text = String(pathAndQuery)
        var bytes: [UInt8] = []
        text.withUTF8 { text in
            let end = text.firstIndex(of: UInt8(ascii: "#")) ?? text.endIndex
            bytes.reserveCapacity(end + 1)
            if text.first != UInt8(ascii: "/") { bytes.append(UInt8(ascii: "/")) }
            RobotsPathNormalization.append(contiguous: UnsafeBufferPointer(rebasing: text[..<end]), asPattern: false, to: &bytes)
        }
        self.bytes = bytes
    }

    /// RFC 9309 §2.2.2: "The /robots.txt URI is implicitly allowed", whatever the rules say and
    /// whatever its query.
    var isRobotsTxt: Bool {
        let path = bytes.firstIndex(of: UInt8(ascii: "?")).map { bytes[..<$0] } ?? bytes[...]
        return path.elementsEqual(Self.robotsTxt)
    }

    private static let robotsTxt: [UInt8] = Array("/robots.txt".utf8)
}
