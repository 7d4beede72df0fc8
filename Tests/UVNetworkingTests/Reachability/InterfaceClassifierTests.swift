import Foundation
import Testing
@testable import UVNetworking

/// The interface kinds read from sysfs, against a tree of the test's own.
@Suite(.tags(.unit)) struct InterfaceClassifierTests {
    /// A fake /sys/class/net: one directory per interface, with the files named.
    private static func makeTree(_ interfaces: [String: [String: String?]]) throws -> URL {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("sysfs-\(UUID().uuidString)")
        for (name, files) in interfaces {
            let directory = root.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            for (file, content) in files {
                let path = directory.appendingPathComponent(file)
                if let content {
                    try content.write(to: path, atomically: true, encoding: .utf8)
                } else {
                    try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
                }
            }
        }
        return root
    }

    @Test func kindsFromAFakeTree() throws {
        let root = try Self.makeTree([
            "wlan0": ["wireless": nil, "type": "1\n", "uevent": "INTERFACE=wlan0\nIFINDEX=3\n"],
            "wlp2s0": ["phy80211": nil, "type": "1\n"],
            "wlx": ["uevent": "DEVTYPE=wlan\nINTERFACE=wlx\n", "type": "1\n"],
            "wwan0": ["uevent": "DEVTYPE=wwan\nINTERFACE=wwan0\n", "type": "1\n"],
            "eth0": ["type": "1\n", "uevent": "INTERFACE=eth0\nIFINDEX=2\n"],
            "br0": ["type": "1\n", "uevent": "DEVTYPE=bridge\nINTERFACE=br0\n"],
            "lo": ["type": "772\n", "uevent": "INTERFACE=lo\nIFINDEX=1\n"],
            "tun0": ["type": "65534\n", "uevent": "DEVTYPE=tun\n"],
            "garbled": ["type": "ether\n"],
            "empty": [:],
        ])
        defer { try? FileManager.default.removeItem(at: root) }
        let classifier = InterfaceClassifier(root: root.path)
        #expect(classifier.kind(of: "wlan0") == .wifi)
        #expect(classifier.kind(of: "wlp2s0") == .wifi)
        #expect(classifier.kind(of: "wlx") == .wifi)
        #expect(classifier.kind(of: "wwan0") == .cellular)
        #expect(classifier.kind(of: "eth0") == .ethernet)
        #expect(classifier.kind(of: "br0") == .ethernet)
        #expect(classifier.kind(of: "lo") == .other)
        #expect(classifier.kind(of: "tun0") == .other)
        #expect(classifier.kind(of: "garbled") == .other)
        #expect(classifier.kind(of: "empty") == .other)
    }

    /// An interface gone before it was read, and names that would lead out of the tree.
    @Test func missingAndHostileNamesAreOther() throws {
        let root = try Self.makeTree(["eth0": ["type": "1\n"]])
        defer { try? FileManager.default.removeItem(at: root) }
        let nested = root.appendingPathComponent("eth0")
        let classifier = InterfaceClassifier(root: nested.appendingPathComponent("sub").path)
        #expect(classifier.kind(of: "..") == .other)
        #expect(InterfaceClassifier(root: root.path).kind(of: "gone0") == .other)
        #expect(InterfaceClassifier(root: root.path).kind(of: "eth0/../eth0") == .other)
        #expect(InterfaceClassifier(root: root.path).kind(of: "") == .other)
        #expect(InterfaceClassifier(root: "/nonexistent-\(UUID().uuidString)").kind(of: "eth0") == .other)
    }

    /// This machine's loopback, read from the real sysfs.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/sys/class/net/lo/type"), "no sysfs"))
    func realLoopbackIsOther() {
        #expect(InterfaceClassifier().kind(of: "lo") == .other)
    }
}
