import Foundation

/// `WARC-Date`: UTC, ISO 8601 as WARC 1.1 writes it (W3C-ISO8601), with microseconds, which 1.1
/// allows and which keeps a request and its response apart: `2026-11-28T11:20:00.123456Z`.
enum WARCDate {
    static func string(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        var whole = time_t(seconds.rounded(.down))
        let micros = min(999_999, Int(((seconds - Double(whole)) * 1_000_000).rounded()))
        var parts = tm()
        gmtime_r(&whole, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), micros)
    }
}
