import Foundation

/// Both values, or nil when either is missing.
public func zip2<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}

/// The median (the mean of the middle two for an even count); 0 for none.
public func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}

/// "512 µs" or "1.23 ms".
public func formatMicros(_ micros: Double) -> String {
    micros >= 1000 ? String(format: "%.2f ms", micros / 1000) : String(format: "%.0f µs", micros)
}

/// A rate rounded to a whole number, thousands separated by commas: "123,456".
public func formatRate(_ rate: Double) -> String {
    let digits = String(Int(rate.rounded()))
    var out = ""
    for (index, character) in digits.reversed().enumerated() {
        if index > 0 && index % 3 == 0 { out.append(",") }
        out.append(character)
    }
    return String(out.reversed())
}
