import Testing

/// Every suite that talks to real servers runs inside this one, one test at a time: the tests
/// check process-wide counts (file descriptors, loop handles) that parallel tests would disturb.
@Suite(.serialized) struct EndToEnd {}
