import Foundation

extension HTTPRequestSerializer {
    /// AFNetworking's Accept-Language: the first six preferred languages with q = 1, 0.9 … 0.5,
    /// e.g. "en-US;q=1, fr;q=0.9". With no usable language, "en;q=1", so that servers still get
    /// a definite answer.
    static func acceptLanguage(for languages: [String]) -> String {
        let qualities = ["1", "0.9", "0.8", "0.7", "0.6", "0.5"]
        // Keep language tags to their grammar (RFC 5646: letters, digits, "-"); "_" comes from
        // POSIX locale names.
        let tags = languages.lazy
            .map { String($0.replacingOccurrences(of: "_", with: "-").unicodeScalars.filter(Self.isTagCharacter)) }
            .filter { !$0.isEmpty }
        let entries = zip(tags, qualities).map { "\($0);q=\($1)" }
        return entries.isEmpty ? "en;q=1" : entries.joined(separator: ", ")
    }

    /// "<executable>/<version> (Linux; <OS version>)", the Linux counterpart of AFNetworking's
    /// "<executable>/<version> (<model>; iOS <version>; Scale/<scale>)". The version is the main
    /// bundle's CFBundleShortVersionString or CFBundleVersion, usually absent on Linux, hence
    /// "unknown".
    static let defaultUserAgent: String = {
        let info = Bundle.main.infoDictionary ?? [:]
        let version = (info["CFBundleShortVersionString"] ?? info["CFBundleVersion"]).map { "\($0)" } ?? "unknown"
        return userAgent(executable: ProcessInfo.processInfo.processName, version: version,
                         osVersion: ProcessInfo.processInfo.operatingSystemVersionString)
    }()

    /// The User-Agent for these parts, reduced to printable ASCII.
    static func userAgent(executable: String, version: String, osVersion: String) -> String {
        asciiHeaderValue("\(executable)/\(version) (Linux; \(osVersion))")
    }

    /// `value` transliterated to ASCII where possible ("Ünïcødé" → "Unicode", like AFNetworking's
    /// "Any-Latin; Latin-ASCII" transform), with every other byte and every control character
    /// (CR, LF, ...) dropped, so that it is always a valid header value.
    static func asciiHeaderValue(_ value: String) -> String {
        let transliterated = value.applyingTransform(StringTransform("Any-Latin; Latin-ASCII"), reverse: false) ?? value
        return String(transliterated.unicodeScalars.filter { (0x20..<0x7F).contains($0.value) })
    }

    private static func isTagCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-")
    }
}
