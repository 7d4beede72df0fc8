/// resolv.conf's `options timeout:N attempts:N`, read the way glibc reads them (the file, then
/// the RES_OPTIONS environment variable over it). c-ares 1.18 reads the file's nameservers,
/// search list, ndots and rotate itself, but knows these two only under BSD's names (`retrans:`
/// in milliseconds, `retry:`), so without this a resolv.conf's timeout and attempts would be
/// ignored. Only what is written is set; a resolv.conf without them leaves c-ares's defaults.
struct ResolverOptions: Equatable, Sendable {
    /// Seconds per try of one server (glibc caps it at 30).
    var timeoutSeconds: Int?
    /// Rounds over the servers (glibc caps it at 5).
    var attempts: Int?

    /// Given values (nil: not written).
    init(timeoutSeconds: Int?, attempts: Int?) {
        self.timeoutSeconds = timeoutSeconds
        self.attempts = attempts
    }

    /// The options of resolv.conf's `text` and then of `environment` (RES_OPTIONS's value).
    init(resolvConf text: String, environment: String? = nil) {
        for line in text.split(whereSeparator: { $0 == "\n" }) {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.first == "options" else { continue }
            apply(fields.dropFirst())
        }
        if let environment { apply(environment.split(whereSeparator: { $0 == " " || $0 == "\t" })) }
    }

    private mutating func apply<Words: Sequence>(_ words: Words) where Words.Element == Substring {
        for word in words {
            if word.hasPrefix("timeout:"), let value = Int(word.dropFirst("timeout:".count)), value >= 0 {
                timeoutSeconds = min(max(value, 1), 30)
            } else if word.hasPrefix("attempts:"), let value = Int(word.dropFirst("attempts:".count)), value >= 0 {
                attempts = min(max(value, 1), 5)
            }
        }
    }
}
