program test_pcoll_f
end program test_pcoll_f
