"""What mockserver weighs where it is used: start-up, memory, installed size, the image, the test suite."""
